package source

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage"
)

// TestLateFetchAnswerKeepsNewerMeasurement: the source side of the lag is
// the newest measurement by when its request was sent. A fetch answer
// that comes after a ListOffsets asked meanwhile (a long poll answered
// late) does not put back its older high watermark; a fetch sent later
// does replace it.
func TestLateFetchAnswerKeepsNewerMeasurement(t *testing.T) {
	c, err := New(Config{MirrorName: "m", BootstrapServers: []string{"127.0.0.1:1"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	tp := storage.TopicPartition{Topic: "t", Partition: 0}
	t0 := time.Unix(1000, 0)
	fetchSent, listSent, laterFetchSent := t0, t0.Add(100*time.Millisecond), t0.Add(600*time.Millisecond)
	answer := func(hw, lso int64) *kmsg.FetchResponseTopicPartition {
		d := kmsg.NewFetchResponseTopicPartition()
		d.HighWatermark, d.LastStableOffset, d.LogStartOffset = hw, lso, 0
		return &d
	}
	want := func(what string, hw, lso int64, at time.Time) {
		t.Helper()
		st, ok := c.Status(tp)
		if !ok || st.HighWatermark != hw || st.LastStableOffset != lso || !st.MeasuredAt.Equal(at) {
			t.Fatalf("%s: HW %d LSO %d measured at %v; want %d, %d at %v", what, st.HighWatermark, st.LastStableOffset,
				st.MeasuredAt, hw, lso, at)
		}
	}

	// A ListOffsets (the core's; MeasureLatest's keeps its answers the
	// same way) answers HW 120.
	c.recordLatest(tp, 120, listSent)
	want("ListOffsets", 120, -1, listSent)

	// The fetch sent before it answers afterwards with HW 100, LSO 90:
	// neither is taken.
	c.recordData(tp, route{leader: 1, epoch: 3}, answer(100, 90), fetchSent)
	want("a late fetch answer", 120, -1, listSent)
	if st, _ := c.Status(tp); st.Leader != 1 || st.LogStartOffset != 0 {
		t.Fatalf("the late answer's other news is kept: %+v", st)
	}

	// The next fetch, sent after the ListOffsets, is newer.
	c.recordData(tp, route{leader: 1, epoch: 3}, answer(130, 130), laterFetchSent)
	want("a later fetch", 130, 130, laterFetchSent)

	// So is a ListOffsets sent before it that answers late, the other way.
	c.recordLatest(tp, 125, listSent.Add(time.Millisecond))
	want("a late ListOffsets answer", 130, 130, laterFetchSent)
}
