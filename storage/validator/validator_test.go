package validator

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/storage/record"
)

// TestSeedsAccepted checks the fuzz seeds are valid, so the fuzzers start
// from the accepting path, and that each codec's batch keeps its records
// byte for byte.
func TestSeedsAccepted(t *testing.T) {
	v := New(nil)
	for i, b := range seedBatches(t) {
		origin := record.OriginClient
		if record.Batch(b).IsControl() {
			origin = record.OriginCoordinator
		}
		buf := bytes.Clone(b)
		info, err := v.ValidateAndAssignOffsets(buf, origin, DefaultConfig(), fuzzNow, 100, 9)
		if err != nil {
			t.Fatalf("seed %d (%s): %v", i, record.Batch(b).Compression(), err)
		}
		out := info.Batches[0]
		if out.BaseOffset() != 100 || out.PartitionLeaderEpoch() != 9 || !out.ValidCRC() {
			t.Fatalf("seed %d: header not assigned: offset %d epoch %d", i, out.BaseOffset(), out.PartitionLeaderEpoch())
		}
		if !bytes.Equal(buf[record.HeaderSize:], b[record.HeaderSize:]) {
			t.Fatalf("seed %d: records changed", i)
		}
		if info.LastOffset != 100+int64(out.RecordCount())-1 {
			t.Fatalf("seed %d: last offset %d", i, info.LastOffset)
		}
	}
}

func TestReplicationOriginRefused(t *testing.T) {
	b := seedBatches(t)[0]
	buf := bytes.Clone(b)
	if _, err := New(nil).ValidateAndAssignOffsets(buf, record.OriginReplication, DefaultConfig(), fuzzNow, 0, 0); !errors.Is(err, ErrWrongOrigin) {
		t.Fatalf("replication origin on the leader path: got %v, want ErrWrongOrigin", err)
	}
	if !bytes.Equal(buf, b) {
		t.Fatal("buffer modified")
	}
}

// TestConcurrent shares one Validator (and its decoder pools) between
// goroutines; run with -race.
func TestConcurrent(t *testing.T) {
	v := New(record.NewDecompressor())
	seeds := seedBatches(t)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 20 {
				b := seeds[(g+i)%len(seeds)]
				origin := record.OriginClient
				if record.Batch(b).IsControl() {
					origin = record.OriginCoordinator
				}
				if _, err := v.ValidateAndAssignOffsets(bytes.Clone(b), origin, DefaultConfig(), fuzzNow, int64(i), 1); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestDecompressLimit(t *testing.T) {
	for _, c := range []struct {
		maxMsg int32
		maxDec int64
		want   int64
	}{
		{1000, 5000, 5000},
		{9000, 5000, 9000},
		{1000, 0, DefaultMaxDecompressedBytes},
		{1000, -1, DefaultMaxDecompressedBytes},
	} {
		cfg := Config{MaxMessageBytes: c.maxMsg, MaxDecompressedBytes: c.maxDec}
		if got := cfg.decompressLimit(); got != c.want {
			t.Errorf("max.message.bytes %d, MaxDecompressedBytes %d: limit %d, want %d", c.maxMsg, c.maxDec, got, c.want)
		}
	}
}

// TestRecordErrorsCapped: every bad record is counted but only the first
// maxRecordErrors are kept for the response.
func TestRecordErrorsCapped(t *testing.T) {
	const n = 2500
	var raw []byte
	for i := range n {
		raw = encodeRecord(raw, testRec{value: []byte("v"), offsetDelta: int32(i), declHeaders: -1})
	}
	buf := newTestBatch(record.CodecNone, n, raw).bytes()
	cfg := DefaultConfig()
	cfg.Compacted = true
	_, err := New(nil).ValidateAndAssignOffsets(buf, record.OriginClient, cfg, fuzzNow, 0, 0)
	var re *record.Error
	if !errors.As(err, &re) || re.Code != kerr.InvalidRecord {
		t.Fatalf("got %v, want INVALID_RECORD", err)
	}
	if len(re.Records) != maxRecordErrors || re.Records[maxRecordErrors-1].Index != maxRecordErrors-1 {
		t.Fatalf("kept %d record errors, want the first %d", len(re.Records), maxRecordErrors)
	}
	if !strings.Contains(re.Msg, "due to 2500 record errors in total") {
		t.Fatalf("message %q does not count every error", re.Msg)
	}
}
