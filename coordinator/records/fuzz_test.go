package records

import (
	"bytes"
	"reflect"
	"testing"
)

// FuzzDecodeValue decodes arbitrary bytes as a value of every type: no
// panic, and whatever decodes re-encodes to bytes that decode to the same
// value and encode to the same bytes again.
func FuzzDecodeValue(f *testing.F) {
	for _, g := range goldens() {
		f.Add(int16(g.key.Type), g.valueBytes)
	}
	for typ, values := range fullValues() {
		for _, v := range values {
			f.Add(int16(typ), v.AppendTo(nil))
		}
	}
	f.Fuzz(func(t *testing.T, typ int16, b []byte) {
		v, err := NewValue(RecordType(typ))
		if err != nil {
			return
		}
		if v.ReadFrom(b) != nil {
			return
		}
		enc := v.AppendTo(nil)
		again, _ := NewValue(RecordType(typ))
		if err := again.ReadFrom(enc); err != nil {
			t.Fatalf("re-encoded %x does not decode: %v", enc, err)
		}
		if !reflect.DeepEqual(again, v) {
			t.Fatalf("decoded %+v, re-decoded %+v", v, again)
		}
		if enc2 := again.AppendTo(nil); !bytes.Equal(enc2, enc) {
			t.Fatalf("encodings differ: %x then %x", enc, enc2)
		}
	})
}

// FuzzDecodeKey decodes arbitrary bytes as a key: no panic, and a key
// that decodes encodes back to the same bytes (keys have one encoding).
func FuzzDecodeKey(f *testing.F) {
	for _, g := range goldens() {
		f.Add(g.keyBytes)
	}
	f.Add([]byte{0x00, 0x01, 0x00, 0x01, 'g'})
	f.Fuzz(func(t *testing.T, b []byte) {
		var k Key
		if k.ReadFrom(b) != nil {
			return
		}
		if enc := k.AppendTo(nil); !bytes.Equal(enc, b) {
			t.Fatalf("key %x decoded to %+v, which encodes to %x", b, k, enc)
		}
	})
}
