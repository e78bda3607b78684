package validator

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/strait-io/strait/storage/record"
)

// TestValidate runs the scripts in testdata/validate.
//
//	batch name=<n> [codec=none|gzip|snappy|snappy-raw|lz4|zstd] [codec-id=<bits>]
//	      [lat] [txn] [control] [pid=] [pepoch=] [seq=] [base-ts=] [base-offset=]
//	      [epoch=] [count=] [lod=] [max-ts=] [magic=] [bad-crc] [trailing=<bytes>]
//	      [flip=<index in the records section, negative from its end; the CRC stays valid>]
//	key=<k> value=<v> vlen=<n x's as the value> ts=<delta> od=<offset delta>
//	headers=<n> decl-headers=<n>
//	...
//
// builds a batch (absent key/value are null; od defaults to the record's
// index; max-ts defaults to the greatest record timestamp).
//
//	validate [origin=client|coordinator|replication] [ts-type=create|append]
//	         [now=] [next=] [epoch=] [compacted] [max-msg=] [segment=]
//	         [before=] [after=] [max-decompress=]
//	<batch name> | cut=<n> | append=<hex>
//
// concatenates the named batches, validates a copy and prints the result.
// After a rejection it checks the copy is unchanged; after an acceptance it
// checks that only the leader-owned header fields changed and lists them.
func TestValidate(t *testing.T) {
	datadriven.Walk(t, "testdata/validate", func(t *testing.T, path string) {
		batches := map[string][]byte{}
		v := New(record.NewDecompressor())
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "batch":
				var name string
				d.ScanArgs(t, "name", &name)
				b := buildScripted(t, d)
				batches[name] = b
				return fmt.Sprintf("%s: %d bytes, %d records, crc %s\n", name, len(b), record.Batch(b).RecordCount(), crcState(b))
			case "validate":
				return runValidate(t, d, v, batches)
			default:
				d.Fatalf(t, "unknown command %q", d.Cmd)
				return ""
			}
		})
	})
}

func crcState(b []byte) string {
	if record.Batch(b).ValidCRC() {
		return "valid"
	}
	return "INVALID"
}

func buildScripted(t *testing.T, d *datadriven.TestData) []byte {
	var recs []testRec
	for i, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		r := testRec{offsetDelta: int32(i), declHeaders: -1}
		for _, f := range strings.Fields(line) {
			k, val, _ := strings.Cut(f, "=")
			switch k {
			case "key":
				r.key = []byte(val)
			case "value":
				r.value = []byte(val)
			case "vlen":
				r.value = bytes.Repeat([]byte{'x'}, int(atoi(t, val)))
			case "ts":
				r.tsDelta = atoi(t, val)
			case "od":
				r.offsetDelta = int32(atoi(t, val))
			case "headers":
				r.headers = int(atoi(t, val))
			case "decl-headers":
				r.declHeaders = int32(atoi(t, val))
			default:
				d.Fatalf(t, "unknown record field %q", k)
			}
		}
		recs = append(recs, r)
	}
	var raw []byte
	maxDelta := int64(0)
	for i, r := range recs {
		raw = encodeRecord(raw, r)
		if i == 0 || r.tsDelta > maxDelta {
			maxDelta = r.tsDelta
		}
	}
	if d.HasArg("trailing") {
		var n int
		d.ScanArgs(t, "trailing", &n)
		raw = append(raw, make([]byte, n)...)
	}

	codec, snappyRaw := record.CodecNone, false
	if d.HasArg("codec") {
		var name string
		d.ScanArgs(t, "codec", &name)
		if name == "snappy-raw" {
			name, snappyRaw = "snappy", true
		}
		c, ok := record.ParseCodec(name)
		if !ok {
			d.Fatalf(t, "unknown codec %q", name)
		}
		codec = c
	}
	body := raw
	if codec != record.CodecNone {
		body = compress(t, codec, snappyRaw, raw)
	}
	if d.HasArg("flip") {
		// Corrupt the (compressed) records but keep the CRC valid, so only
		// decoding can tell.
		var n int
		d.ScanArgs(t, "flip", &n)
		if n < 0 {
			n += len(body)
		}
		body[n] ^= 0xff
	}
	tb := newTestBatch(codec, len(recs), body)
	tb.baseTs = 1000
	scanInt(t, d, "base-ts", &tb.baseTs)
	tb.maxTs = tb.baseTs + maxDelta
	scanInt(t, d, "max-ts", &tb.maxTs)
	scanInt(t, d, "base-offset", &tb.baseOffset)
	var n64 int64
	if scanInt(t, d, "epoch", &n64) {
		tb.epoch = int32(n64)
	}
	if scanInt(t, d, "count", &n64) {
		tb.count = int32(n64)
	}
	if scanInt(t, d, "lod", &n64) {
		tb.lod = int32(n64)
	}
	if scanInt(t, d, "magic", &n64) {
		tb.magic = int8(n64)
	}
	if scanInt(t, d, "codec-id", &n64) {
		tb.attrs = tb.attrs&^attrCodecMask | int16(n64)
	}
	scanInt(t, d, "pid", &tb.pid)
	if scanInt(t, d, "pepoch", &n64) {
		tb.pepoch = int16(n64)
	}
	if scanInt(t, d, "seq", &n64) {
		tb.seq = int32(n64)
	}
	if d.HasArg("lat") {
		tb.attrs |= attrLAT
	}
	if d.HasArg("txn") {
		tb.attrs |= attrTxn
	}
	if d.HasArg("control") {
		tb.attrs |= attrControl
	}
	b := tb.bytes()
	if d.HasArg("bad-crc") {
		b[posCRC] ^= 0xff
	}
	return b
}

func atoi(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("bad number %q: %v", s, err)
	}
	return n
}

func scanInt(t *testing.T, d *datadriven.TestData, key string, dst *int64) bool {
	if !d.HasArg(key) {
		return false
	}
	var s string
	d.ScanArgs(t, key, &s)
	*dst = atoi(t, s)
	return true
}

func runValidate(t *testing.T, d *datadriven.TestData, v *Validator, batches map[string][]byte) string {
	var buf []byte
	for _, line := range strings.Fields(d.Input) {
		switch k, val, _ := strings.Cut(line, "="); k {
		case "cut":
			buf = buf[:len(buf)-int(atoi(t, val))]
		case "append":
			h, err := hex.DecodeString(val)
			if err != nil {
				d.Fatalf(t, "bad hex %q", val)
			}
			buf = append(buf, h...)
		default:
			b, ok := batches[line]
			if !ok {
				d.Fatalf(t, "unknown batch %q", line)
			}
			buf = append(buf, b...)
		}
	}
	orig := bytes.Clone(buf)

	cfg := DefaultConfig()
	if d.HasArg("ts-type") {
		var s string
		d.ScanArgs(t, "ts-type", &s)
		if s == "append" {
			cfg.TimestampType = record.LogAppendTime
		}
	}
	cfg.Compacted = d.HasArg("compacted")
	var n int64
	if scanInt(t, d, "max-msg", &n) {
		cfg.MaxMessageBytes = int32(n)
	}
	if scanInt(t, d, "segment", &n) {
		cfg.SegmentBytes = int32(n)
	}
	scanInt(t, d, "before", &cfg.TimestampBeforeMaxMs)
	scanInt(t, d, "after", &cfg.TimestampAfterMaxMs)
	scanInt(t, d, "max-decompress", &cfg.MaxDecompressedBytes)
	now, next, epoch := int64(1_000_000), int64(0), int64(7)
	scanInt(t, d, "now", &now)
	scanInt(t, d, "next", &next)
	scanInt(t, d, "epoch", &epoch)

	origin := "client"
	if d.HasArg("origin") {
		d.ScanArgs(t, "origin", &origin)
	}
	var (
		info Info
		err  error
	)
	switch origin {
	case "client":
		info, err = v.ValidateAndAssignOffsets(buf, record.OriginClient, cfg, now, next, int32(epoch))
	case "coordinator":
		info, err = v.ValidateAndAssignOffsets(buf, record.OriginCoordinator, cfg, now, next, int32(epoch))
	case "replication":
		info, err = v.ValidateReplicated(buf, cfg, next)
	default:
		d.Fatalf(t, "unknown origin %q", origin)
	}

	var out strings.Builder
	if err != nil {
		var re *record.Error
		if !errors.As(err, &re) {
			fmt.Fprintf(&out, "error (no Kafka code): %v\n", err)
		} else {
			fmt.Fprintf(&out, "error %s: %s\n", re.Code.Message, re.Msg)
			for _, r := range re.Records {
				fmt.Fprintf(&out, "  record %d: %s\n", r.Index, r.Msg)
			}
		}
		if bytes.Equal(buf, orig) {
			out.WriteString("input unchanged\n")
		} else {
			out.WriteString("INPUT CHANGED\n")
		}
		return out.String()
	}
	fmt.Fprintf(&out, "ok: offsets [%d, %d] max-ts=%d offset-of-max-ts=%d records=%d bytes=%d compressed=%t\n",
		info.FirstOffset, info.LastOffset, info.MaxTimestamp, info.OffsetOfMaxTimestamp, info.NumRecords, info.Bytes, info.Compressed)
	pos := 0
	for i, b := range info.Batches {
		o := record.Batch(orig[pos : pos+len(b)])
		if &b[0] != &buf[pos] {
			t.Errorf("batch %d is not a slice of the input at %d", i, pos)
		}
		pos += len(b)
		fmt.Fprintf(&out, "batch %d: offsets [%d, %d] epoch=%d %s max-ts=%d crc %s changed=%s\n",
			i, b.BaseOffset(), b.LastOffset(), b.PartitionLeaderEpoch(), b.TimestampType(), b.MaxTimestamp(),
			crcState(b), changedFields(t, o, b))
	}
	if pos != len(buf) {
		t.Errorf("batches cover %d of %d bytes", pos, len(buf))
	}
	return out.String()
}

// changedFields lists which header fields differ, and fails the test if any
// byte outside the leader-owned fields changed.
func changedFields(t *testing.T, before, after record.Batch) string {
	fields := []struct {
		name     string
		from, to int
	}{
		{"base-offset", 0, 8}, {"epoch", posEpoch, posMagic}, {"crc", posCRC, posAttrs},
		{"attributes", posAttrs, posLOD}, {"max-ts", posMaxTs, posPID},
	}
	owned := make([]bool, len(before))
	var changed []string
	for _, f := range fields {
		if !bytes.Equal(before[f.from:f.to], after[f.from:f.to]) {
			changed = append(changed, f.name)
		}
		for i := f.from; i < f.to; i++ {
			owned[i] = true
		}
	}
	for i := range before {
		switch {
		case before[i] == after[i]:
		case i == posAttrs+1 && before[i]^after[i] == attrLAT:
			// Only the timestamp type bit of the attributes is the leader's.
		case owned[i] && (i < posAttrs || i >= posLOD):
		default:
			t.Errorf("byte %d changed from %#x to %#x outside the leader-owned header fields", i, before[i], after[i])
		}
	}
	if len(changed) == 0 {
		return "none"
	}
	return strings.Join(changed, ",")
}
