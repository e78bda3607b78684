package mirrormsg_test

import (
	"math"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
	"github.com/strait-io/strait/raftmeta/mirrormsg/internal/schema"
)

// schemas are the JSON schemas by message name, parsed once per test binary.
var schemas = sync.OnceValues(func() (map[string]*schema.Message, error) {
	msgs, err := schema.ParseDir("testdata/schemas")
	if err != nil {
		return nil, err
	}
	m := map[string]*schema.Message{}
	for _, msg := range msgs {
		m[msg.Name] = msg
	}
	return m, nil
})

func schemaOf(t testing.TB, name string) *schema.Message {
	t.Helper()
	m, err := schemas()
	if err != nil {
		t.Fatal(err)
	}
	s := m[name]
	if s == nil {
		t.Fatalf("no schema for %s", name)
	}
	return s
}

// message is any request or response of the package.
type message interface {
	Key() int16
	SetVersion(int16)
	AppendTo([]byte) []byte
	ReadFrom([]byte) error
}

// msgName is the type name of a message, e.g. "CreateMirrorRequest".
func msgName(m any) string { return reflect.TypeOf(m).Elem().Name() }

// allMessages returns a new request and response of every RPC.
func allMessages() []message {
	var out []message
	for _, a := range mirrormsg.APIs {
		out = append(out, a.NewRequest(), a.NewResponse())
	}
	return out
}

// newLike returns a new message of m's type with its defaults.
func newLike(m message) message {
	a, _ := mirrormsg.Lookup(m.Key())
	if _, ok := m.(kmsg.Request); ok {
		return a.NewRequest()
	}
	return a.NewResponse()
}

// filler sets the fields of a message from its schema, walking the Go
// struct and the schema together, so a field the schema has and the Go
// type lacks (or the reverse) fails the test. Random values include the
// edge cases of the encoding: nulls, empty arrays and strings, extreme
// integers, tagged fields at and off their defaults, unknown tags.
type filler struct {
	t   testing.TB
	rng *rand.Rand
	// full sets every field to a value off its default and every array
	// to two elements: each byte of the encoding is then reached.
	full bool
}

func (f *filler) fillMessage(m message) {
	f.t.Helper()
	s := schemaOf(f.t, msgName(m))
	v := reflect.ValueOf(m).Elem()
	f.fillStruct(v, s.Fields, true)
}

func (f *filler) fillStruct(v reflect.Value, fields []*schema.Field, top bool) {
	want := len(fields) + 1 // UnknownTags
	if top {
		want++ // Version
	}
	if v.NumField() != want {
		f.t.Fatalf("%s has %d fields, the schema %d (+UnknownTags, Version)", v.Type(), v.NumField(), len(fields))
	}
	tags := map[int]bool{}
	for _, fd := range fields {
		fv := v.FieldByName(schema.GoName(fd.Name))
		if !fv.IsValid() {
			f.t.Fatalf("%s has no field %s", v.Type(), schema.GoName(fd.Name))
		}
		if fd.Tagged() {
			tags[fd.Tag] = true
		}
		f.fillField(fv, fd)
	}
	if f.full || f.rng.IntN(4) == 0 {
		// An unknown tag, numbered past every known one, must come back.
		tag := uint32(100 + f.rng.IntN(20))
		val := make([]byte, f.rng.IntN(6)+1)
		for i := range val {
			val[i] = byte(f.rng.Uint32())
		}
		tagsField := v.FieldByName("UnknownTags").Addr().Interface().(*kmsg.Tags)
		tagsField.Set(tag, val)
	}
}

func (f *filler) fillField(fv reflect.Value, fd *schema.Field) {
	if !fd.IsArray() {
		if fd.Nullable() {
			if !f.full && f.rng.IntN(3) == 0 {
				fv.Set(reflect.Zero(fv.Type()))
				return
			}
			p := reflect.New(fv.Type().Elem())
			f.primitive(p.Elem(), fd.Type)
			fv.Set(p)
			return
		}
		f.primitive(fv, fd.Type)
		return
	}
	n := 2
	if !f.full {
		n = f.rng.IntN(4)
	}
	switch {
	case fd.Nullable() && !f.full && f.rng.IntN(4) == 0:
		fv.Set(reflect.Zero(fv.Type())) // null
		return
	case n == 0 && !fd.Nullable():
		// A non-nullable empty array decodes as nil, like kmsg.
		fv.Set(reflect.Zero(fv.Type()))
		return
	}
	s := reflect.MakeSlice(fv.Type(), n, n)
	for i := range n {
		if fd.IsStructArray() {
			f.fillStruct(s.Index(i), fd.Fields, false)
		} else {
			f.primitive(s.Index(i), fd.Elem())
		}
	}
	fv.Set(s)
}

var (
	strs = []string{"", "m", "mirror-1", "topic.with.dots", "ünïcödé", string(make([]byte, 300))}
	ints = []int64{0, -1, 1, 7, 1000, math.MinInt64, math.MaxInt64, math.MinInt32, math.MaxInt32}
)

func (f *filler) primitive(v reflect.Value, typ string) {
	switch typ {
	case "bool":
		v.SetBool(f.full || f.rng.IntN(2) == 0)
	case "string":
		s := strs[f.rng.IntN(len(strs))]
		if f.full {
			s = "s"
		}
		v.SetString(s)
	case "bytes":
		b := []byte(strs[f.rng.IntN(len(strs))])
		if f.full {
			b = []byte{0xa5}
		}
		v.SetBytes(b)
	case "uuid":
		var u [16]byte
		if f.full || f.rng.IntN(3) > 0 {
			for i := range u {
				u[i] = byte(f.rng.Uint32()) | 1
			}
		}
		v.Set(reflect.ValueOf(u))
	default: // int8 ... int64
		x := ints[f.rng.IntN(len(ints))]
		if f.rng.IntN(2) == 0 {
			x = int64(f.rng.Uint64())
		}
		if f.full {
			x = 3 // off every default (0, -1, MinInt32)
		}
		v.SetInt(x) // SetInt truncates to the field's width
	}
}
