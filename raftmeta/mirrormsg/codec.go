package mirrormsg

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The primitives below are what kmsg's generated code uses (its unexported
// appendString, readArrayLen, ...), rebuilt on the public kbin package. The
// generated files call them; they are the only encoding code written by
// hand.
//
// Decoding is stricter than kmsg's in three ways, so that a codec bug or a
// corrupt frame shows as an error instead of a plausible value: a null
// array where the schema does not allow one is an error (Kafka's generated
// Java code throws there too), bytes left after a message or inside a known
// tagged field are an error, and an array length the remaining input
// cannot hold is rejected before anything is allocated.

var (
	// errNull is a null for a field whose schema does not allow one.
	errNull = errors.New("null for a non-nullable field")
	// errArrayLength is an array length below -1.
	errArrayLength = errors.New("invalid array length")
)

func appendString(dst []byte, s string, flexible bool) []byte {
	if flexible {
		return kbin.AppendCompactString(dst, s)
	}
	return kbin.AppendString(dst, s)
}

func appendNullableString(dst []byte, s *string, flexible bool) []byte {
	if flexible {
		return kbin.AppendCompactNullableString(dst, s)
	}
	return kbin.AppendNullableString(dst, s)
}

func appendBytes(dst, b []byte, flexible bool) []byte {
	if flexible {
		return kbin.AppendCompactBytes(dst, b)
	}
	return kbin.AppendBytes(dst, b)
}

func appendArrayLen(dst []byte, n int, flexible bool) []byte {
	if flexible {
		return kbin.AppendCompactArrayLen(dst, n)
	}
	return kbin.AppendArrayLen(dst, n)
}

func appendNullableArrayLen(dst []byte, n int, isNil, flexible bool) []byte {
	if flexible {
		return kbin.AppendCompactNullableArrayLen(dst, n, isNil)
	}
	return kbin.AppendNullableArrayLen(dst, n, isNil)
}

// appendTag appends one tagged field: its tag, its size, then body, the
// field already encoded (always in the flexible encoding: tagged fields
// exist only in flexible versions, KIP-482).
func appendTag(dst []byte, tag uint32, body []byte) []byte {
	dst = kbin.AppendUvarint(dst, tag)
	dst = kbin.AppendUvarint(dst, uint32(len(body)))
	return append(dst, body...)
}

// appendUnknownTags ends a struct that has no tagged fields of its own: the
// count, then the tags it was decoded with and did not know.
func appendUnknownTags(dst []byte, tags *kmsg.Tags) []byte {
	dst = kbin.AppendUvarint(dst, uint32(tags.Len()))
	return tags.AppendEach(dst)
}

func readString(b *kbin.Reader, flexible, unsafe bool) string {
	switch {
	case flexible && unsafe:
		return b.UnsafeCompactString()
	case flexible:
		return b.CompactString()
	case unsafe:
		return b.UnsafeString()
	default:
		return b.String()
	}
}

func readNullableString(b *kbin.Reader, flexible, unsafe bool) *string {
	switch {
	case flexible && unsafe:
		return b.UnsafeCompactNullableString()
	case flexible:
		return b.CompactNullableString()
	case unsafe:
		return b.UnsafeNullableString()
	default:
		return b.NullableString()
	}
}

// readBytes reads a bytes field; unless unsafe it is copied out of the
// frame, as kmsg copies (UnsafeReadFrom aliases it, as strings).
func readBytes(b *kbin.Reader, flexible, unsafe bool) []byte {
	var v []byte
	if flexible {
		v = b.CompactBytes()
	} else {
		v = b.Bytes()
	}
	if !unsafe && v != nil {
		v = bytes.Clone(v)
	}
	return v
}

// readArrayLen reads an array length, -1 for null. minElem is the fewest
// bytes one element takes, so a length the rest of the input cannot hold
// fails here rather than after a large allocation.
func readArrayLen(b *kbin.Reader, flexible, nullable bool, minElem int) (int, error) {
	var n int64
	if flexible {
		n = int64(b.Uvarint()) - 1
	} else {
		n = int64(b.Int32())
	}
	switch {
	case !b.Ok():
		return 0, kbin.ErrNotEnoughData
	case n < -1:
		return 0, fmt.Errorf("%w: %d", errArrayLength, n)
	case n == -1 && !nullable:
		return 0, errNull
	case n*int64(max(minElem, 1)) > int64(len(b.Src)):
		return 0, fmt.Errorf("%w: %d elements of at least %d bytes in %d bytes", kbin.ErrNotEnoughData, n, minElem, len(b.Src))
	}
	return int(n), nil
}

// readTags reads the tagged fields that end a struct in a flexible version.
// known decodes the field of a tag the struct declares from r, the field's
// bytes, and reports whether it knew the tag; the other tags are kept in
// unknown so that re-encoding the struct sends them back. Unknown tags are
// copied unless unsafe, as the strings of UnsafeReadFrom are not.
func readTags(b *kbin.Reader, unknown *kmsg.Tags, unsafe bool, known func(tag uint32, r *kbin.Reader) (bool, error)) error {
	for n := b.Uvarint(); n > 0 && b.Ok(); n-- {
		tag, size := b.Uvarint(), b.Uvarint()
		span := b.Span(int(size))
		if !b.Ok() {
			break
		}
		if known != nil {
			r := kbin.Reader{Src: span}
			ok, err := known(tag, &r)
			if err == nil && ok {
				err = complete(&r)
			}
			if err != nil {
				return fmt.Errorf("tag %d: %w", tag, err)
			}
			if ok {
				continue
			}
		}
		if !unsafe {
			span = bytes.Clone(span)
		}
		unknown.Set(tag, span)
	}
	if !b.Ok() {
		return kbin.ErrNotEnoughData
	}
	return nil
}

// complete reports a read past the end, or bytes left after the last field.
func complete(b *kbin.Reader) error {
	if !b.Ok() {
		return kbin.ErrNotEnoughData
	}
	if len(b.Src) != 0 {
		return fmt.Errorf("%d bytes left after the last field", len(b.Src))
	}
	return nil
}
