package mirrormsg_test

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kbin"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// TestTruncated decodes every strict prefix of a message whose every field
// is set (so every byte is reached): each must fail, never panic, and the
// error must say the data ran out.
func TestTruncated(t *testing.T) {
	prefixes := 0
	for _, proto := range allMessages() {
		full := newLike(proto)
		(&filler{t: t, rng: rand.New(rand.NewPCG(3, 4)), full: true}).fillMessage(full)
		enc := full.AppendTo(nil)
		for n := range len(enc) {
			v := newLike(proto)
			err := decodeNoPanic(t, v, enc[:n])
			if err == nil {
				t.Fatalf("%s: %d of %d bytes decoded without error: %+v", msgName(proto), n, len(enc), v)
			}
			if !errors.Is(err, kbin.ErrNotEnoughData) {
				t.Fatalf("%s: %d of %d bytes: %v, want kbin.ErrNotEnoughData", msgName(proto), n, len(enc), err)
			}
			prefixes++
		}
	}
	if prefixes < 22*5 {
		t.Fatalf("only %d prefixes checked", prefixes)
	}
	t.Logf("%d prefixes of 22 messages rejected", prefixes)
}

// TestGarbage decodes random bytes, and valid encodings with random bytes
// flipped, into every message: errors are fine, panics are not, and what
// does decode must encode and decode to the same value.
func TestGarbage(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	decoded := 0
	for _, proto := range allMessages() {
		full := newLike(proto)
		(&filler{t: t, rng: rng, full: true}).fillMessage(full)
		valid := full.AppendTo(nil)
		for i := range 1000 {
			var in []byte
			if i%2 == 0 {
				in = make([]byte, rng.IntN(64))
				for j := range in {
					in[j] = byte(rng.Uint32())
				}
			} else {
				in = append([]byte(nil), valid...)
				for range 1 + rng.IntN(3) {
					in[rng.IntN(len(in))] = byte(rng.Uint32())
				}
			}
			v := newLike(proto)
			if decodeNoPanic(t, v, in) != nil {
				continue
			}
			decoded++
			again := newLike(proto)
			if err := again.ReadFrom(v.AppendTo(nil)); err != nil || !reflect.DeepEqual(v, again) {
				t.Fatalf("%s: decoded % x to %+v, which does not round-trip (%v): %+v", msgName(proto), in, v, err, again)
			}
		}
	}
	if decoded == 0 {
		t.Fatal("no flipped input decoded: the check after decoding never ran")
	}
	t.Logf("%d of %d inputs decoded and round-tripped", decoded, 1000*len(allMessages()))
}

func decodeNoPanic(t *testing.T, v message, in []byte) (err error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("%s: panic decoding % x: %v", msgName(v), in, r)
		}
	}()
	return v.ReadFrom(in)
}

// TestStrict covers what kmsg accepts and this package rejects: each is a
// corrupt or mis-framed message rather than a value.
func TestStrict(t *testing.T) {
	for _, c := range []struct {
		name string
		msg  message
		in   []byte
	}{
		{"trailing byte", &mirrormsg.DeleteMirrorRequest{}, cat(cstr("m"), noTags, []byte{0})},
		{"null non-nullable array", &mirrormsg.PauseMirrorTopicsRequest{}, cat(cstr("m"), null, noTags)},
		{"null non-nullable string", &mirrormsg.DeleteMirrorRequest{}, cat(null, noTags)},
		{"array longer than the input", &mirrormsg.ListMirrorsResponse{},
			cat(i32(0), i16(0), null, uv(1<<30), noTags)},
		{"known tag with bytes past its field", &mirrormsg.StartMirrorTopicsResponse{},
			cat(i32(0), i16(0), null, cstr("m"), carr(1), cstr("t"), i16(0), uv(1), tag(0, cat(cstr("x"), []byte{9})), noTags)},
		{"known tag shorter than its field", &mirrormsg.DescribeMirrorsResponse{},
			cat(i32(0), i16(0), null, carr(1), i16(0), cstr("m"), i32(0), carr(1), cstr("t"), carr(1),
				i32(1), i64(1), i64(1), i64(1), cstr("S"), i32(1), uv(1), tag(1, i32(5)), noTags, noTags, noTags)},
		{"tag size past the input", &mirrormsg.ListMirrorsRequest{}, cat(uv(1), uv(7), uv(100), []byte{1, 2})},
		{"tag count past the input", &mirrormsg.ListMirrorsRequest{}, uv(1 << 20)},
	} {
		if err := decodeNoPanic(t, c.msg, c.in); err == nil {
			t.Errorf("%s: %s decoded % x without error", c.name, msgName(c.msg), c.in)
		}
	}

	// The same message without the fault decodes, so each case above
	// fails for the reason it names.
	for _, c := range []struct {
		msg message
		in  []byte
	}{
		{&mirrormsg.DeleteMirrorRequest{}, cat(cstr("m"), noTags)},
		{&mirrormsg.PauseMirrorTopicsRequest{}, cat(cstr("m"), carr(0), noTags)},
		{&mirrormsg.StartMirrorTopicsResponse{}, cat(i32(0), i16(0), null, cstr("m"), carr(1), cstr("t"), i16(0), uv(1), tag(0, cstr("x")), noTags)},
		{&mirrormsg.ListMirrorsRequest{}, cat(uv(1), uv(7), uv(2), []byte{1, 2})},
	} {
		if err := c.msg.ReadFrom(c.in); err != nil {
			t.Errorf("%s: % x: %v", msgName(c.msg), c.in, err)
		}
	}
	// An unknown tag is kept, and sent back.
	var l mirrormsg.ListMirrorsRequest
	if err := l.ReadFrom(cat(uv(1), uv(7), uv(2), []byte{1, 2})); err != nil {
		t.Fatal(err)
	}
	var seen int
	l.UnknownTags.Each(func(k uint32, v []byte) {
		if k != 7 || string(v) != "\x01\x02" {
			t.Errorf("unknown tag %d = % x, want 7 = 01 02", k, v)
		}
		seen++
	})
	if seen != 1 {
		t.Errorf("%d unknown tags, want 1", seen)
	}
	if got := l.AppendTo(nil); string(got) != string(cat(uv(1), uv(7), uv(2), []byte{1, 2})) {
		t.Errorf("unknown tag re-encoded as % x", got)
	}
}
