package source

import (
	"testing"
	"time"

	"github.com/strait-io/strait/storage/record"
)

func lagBatch(t *testing.T, base int64, n int, tt record.TimestampType, baseTs, step int64) record.Batch {
	t.Helper()
	recs := make([]record.Record, n)
	for i := range recs {
		recs[i] = record.Record{TimestampDelta: int64(i) * step, KeyLen: -1, ValueLen: 1, Value: []byte{'v'}}
	}
	b, err := record.Build(record.BatchSpec{BaseOffset: base, ProducerID: record.NoProducerID, BaseSequence: -1,
		TimestampType: tt, BaseTimestamp: baseTs}, recs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tt == record.LogAppendTime {
		b.SetMaxTimestamp(record.LogAppendTime, baseTs+5000)
		b.SetCRC()
	}
	return b
}

// TestSampleLag: the sample is read from the batch headers: the first
// batch's first timestamp (its max timestamp under LogAppendTime) for the
// fetch offset, the last whole batch's end and max timestamp; a batch cut
// by the size limit counts by its header only.
func TestSampleLag(t *testing.T) {
	a := lagBatch(t, 10, 5, record.CreateTime, 1000, 10) // offsets 10-14, ts 1000..1040
	b := lagBatch(t, 15, 3, record.CreateTime, 2000, 1)  // 15-17, ts 2000..2002
	l := lagBatch(t, 18, 2, record.LogAppendTime, 3000, 1)
	cat := func(bs ...record.Batch) []byte {
		var out []byte
		for _, x := range bs {
			out = append(out, x...)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		data []byte
		want LagSample
		ok   bool
	}{
		{"two batches", cat(a, b), LagSample{Offset: 12, Timestamp: 1000, End: 18, EndTimestamp: 2002}, true},
		{"log append time", cat(l), LagSample{Offset: 12, Timestamp: 8000, End: 20, EndTimestamp: 8000}, true},
		{"last batch cut", cat(a, b[:len(b)-3]), LagSample{Offset: 12, Timestamp: 1000, End: 15, EndTimestamp: 1040}, true},
		{"only a cut header", a[:record.HeaderSize], LagSample{Offset: 12, Timestamp: 1000, End: -1, EndTimestamp: -1}, true},
		{"less than a header", a[:record.HeaderSize-1], LagSample{}, false},
		{"empty", nil, LagSample{}, false},
	} {
		got, ok := sampleLag(tc.data, 12)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("%s: %+v %v, want %+v %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

// TestLagSampleLagMs: now − the timestamp of the data at the destination's
// log end offset as far as the sample saw it; −1 beyond it.
func TestLagSampleLagMs(t *testing.T) {
	s := LagSample{Offset: 100, Timestamp: 1_000, End: 150, EndTimestamp: 4_000}
	now := time.UnixMilli(10_000)
	for _, tc := range []struct {
		leo, want int64
	}{
		{90, 9_000},  // destination behind the fetch offset still
		{100, 9_000}, // the fetched data not appended yet
		{120, 6_000}, // partly appended: at most as old as the last batch
		{150, 6_000}, // appended: what comes next is newer than the last batch
		{151, -1},    // past what the sample saw
	} {
		if got := s.LagMs(tc.leo, now); got != tc.want {
			t.Errorf("leo %d: %d, want %d", tc.leo, got, tc.want)
		}
	}
	if got := s.LagMs(90, time.UnixMilli(500)); got != 0 {
		t.Errorf("a timestamp in the future: %d, want 0", got)
	}
	cut := LagSample{Offset: 100, Timestamp: 1_000, End: -1, EndTimestamp: -1}
	if got := cut.LagMs(101, now); got != -1 {
		t.Errorf("no whole batch, leo past the fetch offset: %d, want -1", got)
	}
}

// TestHeadTimestamp: the record at the offset asked, from a fetch answer
// starting with the batch holding it: the batch's first timestamp at its
// start, the record's own inside it (compressed or not), the max
// timestamp under LogAppendTime; a batch cut to its header or whose
// records cannot be read gives its first timestamp.
func TestHeadTimestamp(t *testing.T) {
	plain := lagBatch(t, 10, 5, record.CreateTime, 1000, 10) // offsets 10-14, ts 1000..1040
	l := lagBatch(t, 18, 2, record.LogAppendTime, 3000, 1)
	recs := make([]record.Record, 5)
	for i := range recs {
		recs[i] = record.Record{TimestampDelta: int64(i) * 10, KeyLen: -1, ValueLen: 1, Value: []byte{'v'}}
	}
	gz, err := record.Build(record.BatchSpec{BaseOffset: 10, ProducerID: record.NoProducerID, BaseSequence: -1,
		Codec: record.CodecGzip, BaseTimestamp: 1000}, recs, record.NewCompressor())
	if err != nil {
		t.Fatal(err)
	}
	corrupt := append(record.Batch(nil), plain...)
	for i := record.HeaderSize; i < len(corrupt); i++ {
		corrupt[i] = 0xff
	}
	for _, tc := range []struct {
		name   string
		data   []byte
		offset int64
		want   int64
		ok     bool
	}{
		{"batch start", plain, 10, 1000, true},
		{"inside the batch", plain, 12, 1020, true},
		{"inside a compressed batch", gz, 13, 1030, true},
		{"log append time", l, 19, 8000, true},
		{"cut to its header", plain[:record.HeaderSize], 12, 1000, true},
		{"records unreadable", corrupt, 12, 1000, true},
		{"less than a header", plain[:record.HeaderSize-1], 10, -1, false},
		{"empty", nil, 10, -1, false},
	} {
		got, ok := headTimestamp(tc.data, tc.offset)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("%s: %d %v, want %d %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}
