package validator

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/storage/record"
)

// kafkaCodes are the only errors a client may get for a bad append (§4.2).
var kafkaCodes = map[*kerr.Error]bool{
	kerr.CorruptMessage:             true,
	kerr.InvalidRecord:              true,
	kerr.InvalidTimestamp:           true,
	kerr.MessageTooLarge:            true,
	kerr.RecordListTooLarge:         true,
	kerr.UnsupportedCompressionType: true,
}

const fuzzNow = 1_000_000

// seedBatches are small valid batches of every codec and shape.
func seedBatches(t testing.TB) [][]byte {
	c := record.NewCompressor()
	recs := []record.Record{
		{Key: []byte("k1"), KeyLen: 2, Value: []byte("v1"), ValueLen: 2},
		{Key: []byte("k2"), KeyLen: 2, ValueLen: -1, TimestampDelta: 5,
			Headers: []record.Header{{Key: "h", Value: []byte("x")}}},
	}
	var out [][]byte
	for codec := record.CodecNone; codec <= record.CodecZstd; codec++ {
		b, err := record.Build(record.BatchSpec{
			ProducerID: record.NoProducerID, ProducerEpoch: record.NoProducerEpoch,
			BaseSequence: record.NoSequence, Codec: codec, BaseTimestamp: fuzzNow - 10,
		}, recs, c)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	idem, err := record.Build(record.BatchSpec{
		ProducerID: 7, ProducerEpoch: 1, BaseSequence: 3, Transactional: true,
		Codec: record.CodecLZ4, BaseTimestamp: fuzzNow,
	}, recs, c)
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, idem)
	out = append(out, snappyRawSeed(recs))
	out = append(out, record.EndTxnMarkerBatch(record.ControlBatchSpec{ProducerID: 7, ProducerEpoch: 1, Timestamp: fuzzNow}, true, 2))
	return out
}

func snappyRawSeed(recs []record.Record) []byte {
	var raw []byte
	for i, r := range recs {
		raw = encodeRecord(raw, testRec{key: r.Key, value: r.Value, tsDelta: r.TimestampDelta, offsetDelta: int32(i), declHeaders: -1})
	}
	tb := newTestBatch(record.CodecSnappy, len(recs), snappyLiteralBlock(raw))
	tb.baseTs, tb.maxTs = fuzzNow, fuzzNow+5
	return tb.bytes()
}

// FuzzValidate checks, for any input: no panic; a rejection leaves the input
// unchanged and carries a Kafka code from §4.2; an accepted buffer has valid
// CRCs, is accepted as is by ValidateReplicated with the same Info, and
// (CreateTime) validating it again changes nothing and returns the same
// Info.
func FuzzValidate(f *testing.F) {
	for i, b := range seedBatches(f) {
		f.Add(b, uint8(i))
		bad := bytes.Clone(b)
		bad[len(bad)-1] ^= 1 // records changed, CRC stale
		f.Add(bad, uint8(0))
		f.Add(bad, uint8(8|i)) // CRC fixed up, records damaged
		f.Add(b[:len(b)-3], uint8(0))
	}
	seeds := seedBatches(f)
	f.Add(append(bytes.Clone(seeds[0]), seeds[6]...), uint8(1)) // coordinator, two batches
	f.Add(append(bytes.Clone(seeds[6]), seeds[6]...), uint8(3))

	v := New(record.NewDecompressor())
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		origin := record.OriginClient
		if mode&1 != 0 {
			origin = record.OriginCoordinator
		}
		cfg := DefaultConfig()
		if mode&2 != 0 {
			cfg.TimestampType = record.LogAppendTime
		}
		cfg.Compacted = mode&4 != 0
		// Keep a fuzzed compressed batch from costing 256 MiB of work.
		cfg.MaxDecompressedBytes = 1 << 20
		cfg.MaxMessageBytes = 1 << 16

		if mode&8 != 0 {
			// Let mutations reach record decoding instead of stopping at
			// the CRC.
			data = bytes.Clone(data)
			fixCRCs(data)
		}

		buf := bytes.Clone(data)
		info, err := v.ValidateAndAssignOffsets(buf, origin, cfg, fuzzNow, 0, 5)
		if err != nil {
			if !bytes.Equal(buf, data) {
				t.Fatalf("rejected input was modified: %v", err)
			}
			var re *record.Error
			if !errors.As(err, &re) || !kafkaCodes[re.Code] {
				t.Fatalf("rejection without a §4.2 Kafka code: %v", err)
			}
			return
		}
		if info.Bytes != len(buf) || len(info.Batches) == 0 {
			t.Fatalf("info %+v does not cover the %d-byte buffer", info, len(buf))
		}
		var n int64
		for _, b := range info.Batches {
			if !b.ValidCRC() {
				t.Fatalf("accepted batch at offset %d has a bad CRC", b.BaseOffset())
			}
			n += int64(b.RecordCount())
		}
		if n != info.NumRecords || info.FirstOffset != 0 || info.LastOffset != n-1 {
			t.Fatalf("info %+v inconsistent with %d records", info, n)
		}

		rep, err := v.ValidateReplicated(bytes.Clone(buf), cfg, 0)
		if err != nil {
			t.Fatalf("replicating accepted output: %v", err)
		}
		if !reflect.DeepEqual(rep, info) {
			t.Fatalf("replicated info %+v, leader info %+v", rep, info)
		}
		if cfg.TimestampType == record.LogAppendTime {
			return // a LogAppendTime batch is not something a producer may send
		}
		again := bytes.Clone(buf)
		info2, err := v.ValidateAndAssignOffsets(again, origin, cfg, fuzzNow, 0, 5)
		if err != nil {
			t.Fatalf("re-validating accepted output: %v", err)
		}
		if !bytes.Equal(again, buf) || !reflect.DeepEqual(info2, info) {
			t.Fatalf("re-validation changed the output or its info: %+v vs %+v", info2, info)
		}
	})
}

// FuzzRecordReader decodes arbitrary bytes as a record stream, directly and
// inside a batch of any codec: no panic, a bounded number of steps, and
// every error typed with a Kafka code.
func FuzzRecordReader(f *testing.F) {
	f.Add(encodeRecord(nil, testRec{key: []byte("k"), value: []byte("v"), declHeaders: -1}), uint16(1), uint8(0))
	f.Add(encodeRecord(nil, testRec{key: []byte("k"), headers: 2, declHeaders: -1}), uint16(1), uint8(1))
	f.Add(encodeRecord(nil, testRec{key: []byte("k"), declHeaders: 1000}), uint16(1), uint8(2))
	f.Add([]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, uint16(3), uint8(3))
	f.Add([]byte{}, uint16(0), uint8(4))

	v := New(record.NewDecompressor())
	comp := record.NewCompressor()
	f.Fuzz(func(t *testing.T, data []byte, count uint16, codec uint8) {
		for _, full := range []bool{false, true} {
			rr := record.NewRecordReader(bytes.NewReader(data), int32(count))
			steps := 0
			for {
				_, err := rr.Next(full)
				if errors.Is(err, io.EOF) && !errors.As(err, new(*record.Error)) {
					if err := rr.Finish(); err != nil {
						checkTyped(t, err)
					}
					break
				}
				if err != nil {
					checkTyped(t, err)
					break
				}
				if steps++; steps > int(count) {
					t.Fatalf("read %d records of %d", steps, count)
				}
			}
		}

		c := record.Codec(codec % 5)
		body := data
		switch {
		case c == record.CodecSnappy && codec >= 5:
			body = snappyLiteralBlock(data)
		case c != record.CodecNone:
			var err error
			if body, err = comp.Compress(c, nil, data); err != nil {
				t.Fatal(err)
			}
		}
		n := max(int(count), 1)
		buf := newTestBatch(c, n, body).bytes()
		orig := bytes.Clone(buf)
		cfg := DefaultConfig()
		cfg.MaxDecompressedBytes = 1 << 20
		if _, err := v.ValidateAndAssignOffsets(buf, record.OriginClient, cfg, fuzzNow, 0, 1); err != nil {
			checkTyped(t, err)
			if !bytes.Equal(buf, orig) {
				t.Fatal("rejected batch was modified")
			}
		}
	})
}

// fixCRCs recomputes the CRC of every whole batch at the start of buf.
func fixCRCs(buf []byte) {
	for len(buf) > 0 {
		b, err := record.ReadBatch(buf)
		if err != nil {
			return
		}
		b.SetCRC()
		buf = buf[len(b):]
	}
}

func checkTyped(t *testing.T, err error) {
	t.Helper()
	var re *record.Error
	if !errors.As(err, &re) || !kafkaCodes[re.Code] {
		t.Fatalf("untyped error: %v", err)
	}
}
