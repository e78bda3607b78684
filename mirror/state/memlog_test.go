package state

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/coordinator/runtime/runtimetest"
	"github.com/strait-io/strait/storage/record"
)

// memLog is an in-memory Log: per partition a list of batches with
// offsets assigned on append. Hooks inject failures and stalls.
type memLog struct {
	mu    sync.Mutex
	parts map[int32]*memPartition
	// onAppend, if set, decides an append before it lands: land says
	// whether the batch is added to the log (a timed-out append that still
	// landed: land true with an error), err what Append returns.
	onAppend func(p int32) (land bool, err error)
	// appendGate, if set, is waited on (after landing) before Append
	// returns: the commit wait of acks=all.
	appendGate chan struct{}
	// readGate, if set, is waited on before every Read: a slow load.
	readGate chan struct{}
	appends  int
	reads    int
}

type memPartition struct {
	batches []record.Batch
	next    int64
}

func newMemLog() *memLog { return &memLog{parts: map[int32]*memPartition{}} }

func (l *memLog) part(p int32) *memPartition {
	mp := l.parts[p]
	if mp == nil {
		mp = &memPartition{}
		l.parts[p] = mp
	}
	return mp
}

func (l *memLog) Append(ctx context.Context, p int32, batch []byte) (int64, error) {
	l.mu.Lock()
	l.appends++
	land, err := true, error(nil)
	if l.onAppend != nil {
		land, err = l.onAppend(p)
	}
	var last int64 = -1
	if land {
		mp := l.part(p)
		b := record.Batch(append([]byte(nil), batch...))
		b.SetBaseOffset(mp.next)
		mp.batches = append(mp.batches, b)
		mp.next = b.NextOffset()
		last = b.LastOffset()
	}
	gate := l.appendGate
	l.mu.Unlock()
	if gate != nil && land && err == nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return last, kerr.RequestTimedOut
		}
	}
	return last, err
}

func (l *memLog) Read(ctx context.Context, p int32, from int64, maxBytes int32) ([]byte, int64, int64, error) {
	l.mu.Lock()
	gate := l.readGate
	l.reads++
	l.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, 0, 0, ctx.Err()
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	mp := l.part(p)
	out, next := runtimetest.ReadBatches(mp.batches, from, maxBytes)
	return out, next, mp.next, nil
}

// records returns every record of partition p in log order (tombstones
// have a nil value).
func (l *memLog) records(p int32) []stateRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []stateRecord
	for _, b := range l.part(p).batches {
		rr := record.NewUncompressedReader(b)
		for rr.Remaining() > 0 {
			r, err := rr.Next(true)
			if err != nil {
				panic(err)
			}
			k, err := decodeKey(r.Key)
			if err != nil {
				panic(err)
			}
			sr := stateRecord{key: k}
			if r.ValueLen >= 0 {
				v, err := decodeValue(r.Value)
				if err != nil {
					panic(err)
				}
				sr.value = &v
			}
			out = append(out, sr)
		}
	}
	return out
}

// appendRaw adds a batch of raw records (for records this coordinator
// did not write).
func (l *memLog) appendRaw(p int32, recs []record.Record) {
	b, err := record.Build(record.BatchSpec{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, recs, nil)
	if err != nil {
		panic(err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	mp := l.part(p)
	b.SetBaseOffset(mp.next)
	mp.batches = append(mp.batches, b)
	mp.next = b.NextOffset()
}
