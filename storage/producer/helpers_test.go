package producer

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage/record"
)

// dataBatch builds a v2 data batch of count records at offset, as a client
// would send it after the Log assigned offsets. pid -1 builds a plain batch.
func dataBatch(t testing.TB, pid int64, epoch int16, seq int32, count int, offset int64, txn bool, ts int64) record.Batch {
	t.Helper()
	if pid == record.NoProducerID {
		epoch, seq = record.NoProducerEpoch, record.NoSequence
	}
	recs := make([]record.Record, count)
	for i := range recs {
		recs[i] = record.Record{KeyLen: -1, Value: []byte("v"), ValueLen: 1}
	}
	b, err := record.Build(record.BatchSpec{
		BaseOffset:    offset,
		ProducerID:    pid,
		ProducerEpoch: epoch,
		BaseSequence:  seq,
		Transactional: txn,
		BaseTimestamp: ts,
	}, recs, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// markerBatch builds a COMMIT or ABORT marker at offset.
func markerBatch(pid int64, epoch int16, commit bool, coordEpoch int32, offset, ts int64) record.Batch {
	b := record.EndTxnMarkerBatch(record.ControlBatchSpec{ProducerID: pid, ProducerEpoch: epoch, Timestamp: ts}, commit, coordEpoch)
	b.SetBaseOffset(offset)
	return b
}

// resetBatch builds a MIRROR_PID_RESET control batch at offset.
func resetBatch(offset, ts int64) record.Batch {
	b := record.MirrorPidResetBatch(record.ControlBatchSpec{
		ProducerID:    record.NoProducerID,
		ProducerEpoch: record.NoProducerEpoch,
		Timestamp:     ts,
	})
	b.SetBaseOffset(offset)
	return b
}

// controlInfo decodes a batch's ControlInfo the way the Log does.
func controlInfo(t testing.TB, b record.Batch) ControlInfo {
	t.Helper()
	if !b.IsControl() {
		return ControlInfo{}
	}
	d := record.NewDecompressor()
	typ, err := d.ControlType(b)
	if err != nil {
		t.Fatal(err)
	}
	ci := ControlInfo{Type: typ}
	if typ == kmsg.ControlRecordKeyTypeAbort || typ == kmsg.ControlRecordKeyTypeCommit {
		rr, done, err := d.OpenRecords(b, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		defer done()
		rec, err := rr.Next(true)
		if err != nil {
			t.Fatal(err)
		}
		m, err := record.ParseEndTxnMarker(rec.Value)
		if err != nil {
			t.Fatal(err)
		}
		ci.CoordinatorEpoch = m.CoordinatorEpoch
	}
	return ci
}

// appendBatches runs one Update over batches and commits it, failing the
// test on a rejection.
func appendBatches(t testing.TB, m *Manager, origin record.AppendOrigin, batches ...record.Batch) []CommittedTxn {
	t.Helper()
	u := m.NewUpdate(origin)
	var next int64
	for _, b := range batches {
		if _, err := u.Append(b, controlInfo(t, b)); err != nil {
			t.Fatalf("append at offset %d: %v", b.BaseOffset(), err)
		}
		next = b.NextOffset()
	}
	return u.Commit(next)
}
