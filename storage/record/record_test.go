package record

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func kv(k, v string) Record {
	r := Record{Key: []byte(k), KeyLen: int32(len(k)), Value: []byte(v), ValueLen: int32(len(v))}
	if k == "" {
		r.Key, r.KeyLen = nil, -1
	}
	return r
}

func TestBuildMatchesKmsgDecoding(t *testing.T) {
	c := NewCompressor()
	for _, codec := range []Codec{CodecNone, CodecGzip, CodecSnappy, CodecLZ4, CodecZstd} {
		t.Run(codec.String(), func(t *testing.T) {
			recs := []Record{kv("k1", "v1"), kv("", "no key"), {KeyLen: -1, ValueLen: -1, TimestampDelta: 7,
				Headers: []Header{{Key: "h", Value: []byte("x")}}}}
			b, err := Build(BatchSpec{BaseOffset: 100, PartitionLeaderEpoch: 3, ProducerID: 9, ProducerEpoch: 1,
				BaseSequence: 5, Codec: codec, BaseTimestamp: 1000}, recs, c)
			if err != nil {
				t.Fatal(err)
			}
			// kmsg is the independent decoder: the header must parse the same.
			var kb kmsg.RecordBatch
			if err := kb.ReadFrom(b); err != nil {
				t.Fatal(err)
			}
			if kb.FirstOffset != 100 || kb.PartitionLeaderEpoch != 3 || kb.ProducerID != 9 || kb.FirstSequence != 5 ||
				kb.NumRecords != 3 || kb.LastOffsetDelta != 2 || kb.MaxTimestamp != 1007 || int(kb.Attributes&7) != int(codec) {
				t.Fatalf("header mismatch: %+v", kb)
			}
			if !b.ValidCRC() || b.CRC() != uint32(kb.CRC) {
				t.Fatal("bad CRC")
			}
			if b.LastSequence() != 7 || b.NextOffset() != 103 {
				t.Fatalf("last seq %d next %d", b.LastSequence(), b.NextOffset())
			}
			d := NewDecompressor()
			rr, done, err := d.OpenRecords(b, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			defer done()
			var got []Record
			for {
				r, err := rr.Next(true)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, r)
			}
			if err := rr.Finish(); err != nil {
				t.Fatal(err)
			}
			if len(got) != 3 || string(got[0].Key) != "k1" || string(got[0].Value) != "v1" || got[1].KeyLen != -1 ||
				got[2].ValueLen != -1 || got[2].TimestampDelta != 7 || got[2].OffsetDelta != 2 ||
				len(got[2].Headers) != 1 || got[2].Headers[0].Key != "h" {
				t.Fatalf("records: %+v", got)
			}
		})
	}
}

func TestSetHeaderFieldsKeepCRCValid(t *testing.T) {
	b, _ := Build(BatchSpec{BaseTimestamp: 5}, []Record{kv("a", "b")}, nil)
	crc := b.CRC()
	b.SetBaseOffset(42)
	b.SetPartitionLeaderEpoch(7)
	if b.CRC() != crc || !b.ValidCRC() {
		t.Fatal("base offset and leader epoch must be outside the CRC")
	}
	b.SetMaxTimestamp(LogAppendTime, 999)
	if !b.ValidCRC() || b.TimestampType() != LogAppendTime || b.MaxTimestamp() != 999 || b.CRC() == crc {
		t.Fatal("SetMaxTimestamp must recompute the CRC")
	}
}

func TestReadBatchRejections(t *testing.T) {
	good, _ := Build(BatchSpec{}, []Record{kv("a", "b")}, nil)
	if _, err := ReadBatch(good[:10]); err != io.ErrUnexpectedEOF {
		t.Fatalf("short: %v", err)
	}
	if _, err := ReadBatch(good[:len(good)-1]); err != io.ErrUnexpectedEOF {
		t.Fatalf("truncated: %v", err)
	}
	bad := bytes.Clone(good)
	bad[16] = 1
	if _, err := ReadBatch(bad); !errors.Is(err, kerr.InvalidRecord) {
		t.Fatalf("magic 1: %v", err)
	}
	bad[16] = 3
	if _, err := ReadBatch(bad); !errors.Is(err, kerr.CorruptMessage) {
		t.Fatalf("magic 3: %v", err)
	}
	bad = bytes.Clone(good)
	bad[8], bad[9], bad[10], bad[11] = 0, 0, 0, 10
	if _, err := ReadBatch(bad); !errors.Is(err, kerr.CorruptMessage) {
		t.Fatalf("tiny length: %v", err)
	}
	it := NewIter(append(bytes.Clone(good), good[:20]...))
	n := 0
	for _, ok := it.Next(); ok; _, ok = it.Next() {
		n++
	}
	if n != 1 || !errors.Is(it.Err(), kerr.CorruptMessage) {
		t.Fatalf("iter: n=%d err=%v", n, it.Err())
	}
}

func TestRawSnappyBlockAccepted(t *testing.T) {
	// librdkafka and others send a bare snappy block rather than xerial
	// framing; both must decode.
	raw := []byte("hello hello hello hello")
	c := NewCompressor()
	framed, _ := c.Compress(CodecSnappy, nil, raw)
	block := framed[xerialHeaderLen+4:]
	for name, src := range map[string][]byte{"xerial": framed, "raw": block} {
		s, err := NewDecompressor().Open(CodecSnappy, src, 1<<20)
		if err != nil {
			t.Fatal(name, err)
		}
		got, err := io.ReadAll(s)
		s.Close()
		if err != nil || string(got) != string(raw) {
			t.Fatalf("%s: %q %v", name, got, err)
		}
	}
}

func TestDecompressLimit(t *testing.T) {
	c := NewCompressor()
	big := make([]byte, 1<<20)
	for _, codec := range []Codec{CodecGzip, CodecSnappy, CodecLZ4, CodecZstd} {
		comp, err := c.Compress(codec, nil, big)
		if err != nil {
			t.Fatal(err)
		}
		s, err := NewDecompressor().Open(codec, comp, 64<<10)
		if err != nil {
			t.Fatal(codec, err)
		}
		_, err = io.Copy(io.Discard, s)
		s.Close()
		if !errors.Is(err, kerr.MessageTooLarge) {
			t.Fatalf("%s: over-limit stream gave %v", codec, err)
		}
	}
}

func TestControlBatches(t *testing.T) {
	d := NewDecompressor()
	m := EndTxnMarkerBatch(ControlBatchSpec{ProducerID: 4, ProducerEpoch: 2, Timestamp: 10}, false, 9)
	if !m.IsControl() || !m.IsTransactional() || m.ProducerID() != 4 {
		t.Fatal("marker header")
	}
	typ, err := d.ControlType(m)
	if err != nil || typ != kmsg.ControlRecordKeyTypeAbort {
		t.Fatalf("type %v err %v", typ, err)
	}
	rr := NewUncompressedReader(m)
	rec, _ := rr.Next(true)
	em, err := ParseEndTxnMarker(rec.Value)
	if err != nil || em.CoordinatorEpoch != 9 {
		t.Fatalf("marker value %+v %v", em, err)
	}
	r := MirrorPidResetBatch(ControlBatchSpec{ProducerID: NoProducerID, ProducerEpoch: NoProducerEpoch, Timestamp: 10})
	if !d.IsMirrorPidReset(r) || d.IsMirrorPidReset(m) || r.IsTransactional() {
		t.Fatal("MIRROR_PID_RESET detection")
	}
}

func TestIncrementSequenceWraps(t *testing.T) {
	if IncrementSequence(2147483646, 1) != 2147483647 || IncrementSequence(2147483647, 1) != 0 || IncrementSequence(2147483640, 10) != 2 {
		t.Fatal("wraparound")
	}
}
