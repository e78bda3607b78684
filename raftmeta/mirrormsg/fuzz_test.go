package mirrormsg_test

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// The fuzz targets decode arbitrary bytes as each request, as the wire
// server does with a client's frame. Invariants: no panic; what decodes
// decodes the same with UnsafeReadFrom; and it survives encode → decode
// unchanged (so the server can log, forward or re-encode what it read).
// The seed corpus is the golden encodings, a value with every field set
// and a few truncations of it. `make fuzz` runs each for FUZZTIME.

func FuzzDecodeCreateMirrorRequest(f *testing.F)      { fuzzDecode(f, mirrormsg.KeyCreateMirror) }
func FuzzDecodeStartMirrorTopicsRequest(f *testing.F) { fuzzDecode(f, mirrormsg.KeyStartMirrorTopics) }
func FuzzDecodeStopMirrorTopicsRequest(f *testing.F)  { fuzzDecode(f, mirrormsg.KeyStopMirrorTopics) }
func FuzzDecodeResumeMirrorTopicsRequest(f *testing.F) {
	fuzzDecode(f, mirrormsg.KeyResumeMirrorTopics)
}
func FuzzDecodeListMirrorsRequest(f *testing.F)       { fuzzDecode(f, mirrormsg.KeyListMirrors) }
func FuzzDecodeDescribeMirrorsRequest(f *testing.F)   { fuzzDecode(f, mirrormsg.KeyDescribeMirrors) }
func FuzzDecodeReadMirrorStatesRequest(f *testing.F)  { fuzzDecode(f, mirrormsg.KeyReadMirrorStates) }
func FuzzDecodeWriteMirrorStatesRequest(f *testing.F) { fuzzDecode(f, mirrormsg.KeyWriteMirrorStates) }
func FuzzDecodePauseMirrorTopicsRequest(f *testing.F) { fuzzDecode(f, mirrormsg.KeyPauseMirrorTopics) }
func FuzzDecodeDeleteMirrorRequest(f *testing.F)      { fuzzDecode(f, mirrormsg.KeyDeleteMirror) }
func FuzzDecodeBumpLeaderEpochsRequest(f *testing.F)  { fuzzDecode(f, mirrormsg.KeyBumpLeaderEpochs) }

func fuzzDecode(f *testing.F, key int16) {
	a, ok := mirrormsg.Lookup(key)
	if !ok {
		f.Fatalf("no API %d", key)
	}
	newReq := func() kmsg.Request {
		r := a.NewRequest()
		r.SetVersion(a.Max)
		return r
	}
	seeds := 0
	for _, g := range goldens() {
		if reflect.TypeOf(g.msg) == reflect.TypeOf(newReq()) {
			f.Add(g.want)
			seeds++
		}
	}
	full := newReq()
	(&filler{t: f, rng: rand.New(rand.NewPCG(7, 8)), full: true}).fillMessage(full)
	enc := full.AppendTo(nil)
	f.Add(enc)
	f.Add(enc[:len(enc)/2])
	f.Add([]byte{})
	if seeds == 0 {
		f.Fatalf("no golden seed for %s", a.Name)
	}

	f.Fuzz(func(t *testing.T, in []byte) {
		v := newReq()
		if err := v.ReadFrom(in); err != nil {
			return
		}
		u := newReq()
		if err := u.(kmsg.UnsafeReadFrom).UnsafeReadFrom(in); err != nil {
			t.Fatalf("ReadFrom accepted % x, UnsafeReadFrom did not: %v", in, err)
		}
		if !reflect.DeepEqual(v, u) {
			t.Fatalf("ReadFrom and UnsafeReadFrom differ on % x:\n%+v\n%+v", in, v, u)
		}
		out := v.AppendTo(nil)
		again := newReq()
		if err := again.ReadFrom(out); err != nil {
			t.Fatalf("re-encoding of % x does not decode: %v (% x)", in, err, out)
		}
		if !reflect.DeepEqual(v, again) {
			t.Fatalf("% x: decode → encode → decode changed the value:\n%+v\n%+v", in, v, again)
		}
		if !bytes.Equal(out, again.AppendTo(nil)) {
			t.Fatalf("% x: encoding is not stable", in)
		}
	})
}
