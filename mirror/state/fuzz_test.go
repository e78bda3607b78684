package state

import (
	"bytes"
	"testing"

	"github.com/strait-io/strait/mirror/partition"
)

// FuzzDecodeRecord: the __mirror_state decoders never panic, and what
// decodes as version 0 encodes back to the same bytes (no field is
// invented or dropped).
func FuzzDecodeRecord(f *testing.F) {
	f.Add(encodeKey(Key{"m1", ordersID, 3}), encodeValue(partition.Record{State: partition.StateFailed, StateEpoch: 2, ErrorMessage: "x", RetryAttempt: -1}))
	f.Add([]byte{0, 0, 0xff, 0xff}, []byte{0, 1, 3})
	f.Add([]byte{}, []byte{0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 9, 0x80, 0, 0, 0, 0, 0, 3})
	f.Fuzz(func(t *testing.T, kb, vb []byte) {
		if k, err := decodeKey(kb); err == nil {
			if got := encodeKey(k); !bytes.Equal(got, kb) {
				t.Fatalf("key %x decoded to %v, encodes to %x", kb, k, got)
			}
		}
		v, err := decodeValue(vb)
		if err != nil || len(vb) < 2 || vb[0] != 0 || vb[1] != 0 {
			return
		}
		got := encodeValue(v)
		// A null and an empty error message both read as "", which is
		// written as null: compare after normalizing that one field.
		if !bytes.Equal(got, vb) {
			w, _ := decodeValue(got)
			if w != v {
				t.Fatalf("value %x decoded to %s, re-encodes to %x which decodes to %s", vb, v, got, w)
			}
		}
	})
}
