package records

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The values are flexible messages (KIP-482); the primitives are kbin's.
// Decoding is strict where Kafka's generated Java code is (a null for a
// non-nullable field throws there too) and stricter in two places, so that
// a codec bug or a corrupt record shows as an error rather than a
// plausible value: bytes left after the value, and an array length the
// rest of the record cannot hold (checked before anything is allocated).

var (
	// errNull is a null for a field whose schema does not allow one.
	errNull = errors.New("null for a non-nullable field")
	// errTruncated is a record that ends inside a field.
	errTruncated = fmt.Errorf("truncated record: %w", kbin.ErrNotEnoughData)
)

// tagged is one tagged field to write: its tag and its encoded body.
type tagged struct {
	tag  uint32
	body []byte
}

// appendTags ends a struct: the number of tagged fields, then each in
// ascending tag order, the known ones (already left out when at their
// default, as Kafka's generated code does) merged with the unknown ones
// the struct was decoded with. An unknown tag that a known field uses is
// dropped: the known field is the truth.
func appendTags(dst []byte, unknown *kmsg.Tags, known ...tagged) []byte {
	if unknown.Len() == 0 && len(known) == 0 {
		return append(dst, 0)
	}
	all := known
	unknown.Each(func(tag uint32, body []byte) {
		if !slices.ContainsFunc(known, func(k tagged) bool { return k.tag == tag }) {
			all = append(all, tagged{tag, body})
		}
	})
	slices.SortFunc(all, func(a, b tagged) int { return int(a.tag) - int(b.tag) })
	dst = kbin.AppendUvarint(dst, uint32(len(all)))
	for _, f := range all {
		dst = kbin.AppendUvarint(dst, f.tag)
		dst = kbin.AppendUvarint(dst, uint32(len(f.body)))
		dst = append(dst, f.body...)
	}
	return dst
}

func appendStrings(dst []byte, ss []string) []byte {
	dst = kbin.AppendCompactArrayLen(dst, len(ss))
	for _, s := range ss {
		dst = kbin.AppendCompactString(dst, s)
	}
	return dst
}

func appendInt32s(dst []byte, is []int32) []byte {
	dst = kbin.AppendCompactArrayLen(dst, len(is))
	for _, i := range is {
		dst = kbin.AppendInt32(dst, i)
	}
	return dst
}

// decoder reads one flexible message. The first error sticks: later reads
// return zero values, so a struct's decode reads straight through and the
// caller asks err once (finish).
type decoder struct {
	r   kbin.Reader
	err error
}

func (d *decoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
}

func (d *decoder) ok() bool { return d.err == nil && d.r.Ok() }

func (d *decoder) int8() int8     { return d.r.Int8() }
func (d *decoder) int16() int16   { return d.r.Int16() }
func (d *decoder) int32() int32   { return d.r.Int32() }
func (d *decoder) int64() int64   { return d.r.Int64() }
func (d *decoder) uuid() [16]byte { return d.r.Uuid() }

// length reads a compact length (uvarint of length + 1); -1 is null.
func (d *decoder) length() int {
	if !d.ok() {
		return 0
	}
	return int(int64(d.r.Uvarint()) - 1)
}

func (d *decoder) string() string {
	n := d.length()
	if n < 0 {
		d.fail(errNull)
		return ""
	}
	return string(d.r.Span(n))
}

func (d *decoder) nullableString() *string {
	n := d.length()
	if n < 0 {
		return nil
	}
	s := string(d.r.Span(n))
	return &s
}

func (d *decoder) bytes() []byte {
	n := d.length()
	if n < 0 {
		d.fail(errNull)
		return nil
	}
	return bytes.Clone(d.r.Span(n))
}

// arrayLen reads a compact array length; minElem is the fewest bytes one
// element takes, so that a length the rest of the record cannot hold fails
// before an allocation. A null array is -1 when nullable, else an error;
// on any error it returns 0, so the caller's loop does not run.
func (d *decoder) arrayLen(minElem int, nullable bool) int {
	n := d.length()
	switch {
	case !d.ok():
		return 0
	case n < 0 && !nullable:
		d.fail(errNull)
		return 0
	case n < 0:
		return -1
	case int64(n)*int64(max(minElem, 1)) > int64(len(d.r.Src)):
		d.fail(fmt.Errorf("%w: array of %d elements of at least %d bytes in %d bytes", errTruncated, n, minElem, len(d.r.Src)))
		return 0
	}
	return n
}

func (d *decoder) strings() []string {
	n := d.arrayLen(1, false)
	ss := make([]string, n)
	for i := range ss {
		ss[i] = d.string()
	}
	return ss
}

// int32s reads a compact int32 array; nullable allows null (nil).
func (d *decoder) int32s(nullable bool) []int32 {
	n := d.arrayLen(4, nullable)
	if n < 0 {
		return nil
	}
	is := make([]int32, n)
	for i := range is {
		is[i] = d.int32()
	}
	return is
}

// tags reads the tagged fields ending a struct. known decodes the field of
// a tag the struct declares from f, which holds that field's bytes alone,
// and reports whether it knew the tag; the other tags are kept in unknown,
// copied, so that rewriting the struct sends them back.
func (d *decoder) tags(unknown *kmsg.Tags, known func(tag uint32, f *decoder) bool) {
	if !d.ok() {
		return
	}
	for n := d.r.Uvarint(); n > 0 && d.ok(); n-- {
		tag, size := d.r.Uvarint(), d.r.Uvarint()
		body := d.r.Span(int(size))
		if !d.ok() {
			return
		}
		if known != nil {
			f := &decoder{r: kbin.Reader{Src: body}}
			if known(tag, f) {
				if err := f.finish(); err != nil {
					d.fail(fmt.Errorf("tagged field %d: %w", tag, err))
				}
				continue
			}
		}
		unknown.Set(tag, bytes.Clone(body))
	}
}

// finish reports the first error, a read past the end, or bytes left
// after the last field.
func (d *decoder) finish() error {
	switch {
	case d.err != nil:
		return d.err
	case !d.r.Ok():
		return errTruncated
	case len(d.r.Src) != 0:
		return fmt.Errorf("%d bytes left after the last field", len(d.r.Src))
	}
	return nil
}
