package kframe

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

// ReadFrameInto reads into the given buffer when it has the room and
// allocates otherwise; a frame over the limit fails before any read.
func TestReadFrameInto(t *testing.T) {
	frame := func(body string) *strings.Reader {
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], uint32(len(body)))
		return strings.NewReader(string(b[:]) + body)
	}
	buf := make([]byte, 0, 8)
	got, err := ReadFrameInto(frame("abcd"), 100, buf)
	if err != nil || string(got) != "abcd" || &got[0] != &buf[:1][0] {
		t.Fatalf("small frame: %q, %v, reused %v", got, err, err == nil && &got[0] == &buf[:1][0])
	}
	got, err = ReadFrameInto(frame("0123456789"), 100, buf)
	if err != nil || string(got) != "0123456789" || &got[0] == &buf[:1][0] {
		t.Fatalf("big frame: %q, %v", got, err)
	}
	if _, err := ReadFrameInto(frame("0123456789"), 9, buf); !errors.Is(err, ErrFrame) {
		t.Fatalf("frame over the limit: %v, want ErrFrame", err)
	}
}
