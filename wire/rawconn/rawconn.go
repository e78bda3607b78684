// Package rawconn is a bare TCP connection to a Kafka broker for tests:
// frames written by hand (or bytes that are no frames at all), answers
// read and decoded, closes observed. Tests of bad input use it to send
// what no client library would.
package rawconn

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Conn is a bare TCP connection to a broker on which a test writes
// Kafka frames by hand (or bytes that are no frames at all) and reads
// what comes back, to see how the broker treats input no client library
// would send.
type Conn struct {
	T    testing.TB
	C    net.Conn      // the connection, for deadlines, half-closes and reads of its own
	R    *bufio.Reader // reads C
	corr int32
}

// Dial connects to addr; the connection closes when the test ends.
func Dial(t testing.TB, addr string) *Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return &Conn{T: t, C: c, R: bufio.NewReader(c)}
}

// Write sends b. The broker may close the connection before it has read
// everything (that is the point of most bad input), so a failed write is
// returned, not fatal.
func (rc *Conn) Write(b []byte) error {
	_ = rc.C.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, err := rc.C.Write(b)
	return err
}

// MustWrite is Write for bytes the broker must take.
func (rc *Conn) MustWrite(b []byte) {
	rc.T.Helper()
	if err := rc.Write(b); err != nil {
		rc.T.Fatalf("write: %v", err)
	}
}

// ExpectClosed fails unless the broker closes the connection within
// timeout without answering a byte. A reset counts as closed: the kernel
// resets a connection closed with unread input.
func (rc *Conn) ExpectClosed(what string, timeout time.Duration) {
	rc.T.Helper()
	_ = rc.C.SetReadDeadline(time.Now().Add(timeout))
	n, err := io.Copy(io.Discard, rc.R)
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		rc.T.Fatalf("%s: the broker kept the connection open for %v", what, timeout)
	case err != nil && !errors.Is(err, syscall.ECONNRESET):
		rc.T.Fatalf("%s: reading: %v", what, err)
	case n != 0:
		rc.T.Fatalf("%s: the broker answered %d bytes before closing", what, n)
	}
}

// Send writes req at its version (set by the caller) with the next
// correlation id and returns that id.
func (rc *Conn) Send(req kmsg.Request) int32 {
	rc.T.Helper()
	rc.corr++
	rc.MustWrite(kmsg.NewRequestFormatter(kmsg.FormatterClientID("raw")).AppendRequest(nil, req, rc.corr))
	return rc.corr
}

// RoundTrip sends req at its version and decodes the answer.
func (rc *Conn) RoundTrip(req kmsg.Request) kmsg.Response {
	rc.T.Helper()
	corr := rc.Send(req)
	_ = rc.C.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := ReadResponse(rc.R, req, corr)
	if err != nil {
		rc.T.Fatalf("%s v%d: %v", kmsg.NameForKey(req.Key()), req.GetVersion(), err)
	}
	return resp
}

// ReadFrame reads one size-prefixed frame.
func ReadFrame(r io.Reader) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, err
	}
	return body, nil
}

// ReadResponse reads the answer to req, sent with correlation id corr,
// and decodes it at req's version.
func ReadResponse(r io.Reader, req kmsg.Request, corr int32) (kmsg.Response, error) {
	body, err := ReadFrame(r)
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	if len(body) < 4 {
		return nil, errors.New("an answer without a correlation id")
	}
	if got := int32(binary.BigEndian.Uint32(body)); got != corr {
		return nil, fmt.Errorf("correlation id %d, want %d", got, corr)
	}
	body = body[4:]
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	// Flexible responses have a tagged header, except ApiVersions'
	// (KIP-511: its header stays v0 so any client can read it).
	if resp.IsFlexible() && req.Key() != int16(kmsg.ApiVersions) {
		if body, err = skipHeaderTags(body); err != nil {
			return nil, err
		}
	}
	if err := resp.ReadFrom(body); err != nil {
		return nil, fmt.Errorf("decoding the answer: %w", err)
	}
	return resp, nil
}

// skipHeaderTags skips a flexible response header's tagged fields.
func skipHeaderTags(b []byte) ([]byte, error) {
	n, l := binary.Uvarint(b)
	if l <= 0 {
		return nil, errors.New("bad tagged fields in the response header")
	}
	b = b[l:]
	for range n {
		if _, l = binary.Uvarint(b); l <= 0 {
			return nil, errors.New("bad tag in the response header")
		}
		b = b[l:]
		size, l := binary.Uvarint(b)
		if l <= 0 || uint64(len(b)-l) < size {
			return nil, errors.New("bad tag size in the response header")
		}
		b = b[l+int(size):]
	}
	return b, nil
}

// Frame is a size-prefixed request frame: a v1 header (key, version,
// correlation id, a null client id), the tag byte of a v2 header when
// flexible, then body as given.
func Frame(key, version int16, corr int32, flexible bool, body []byte) []byte {
	f := make([]byte, 4, 4+10+1+len(body))
	f = binary.BigEndian.AppendUint16(f, uint16(key))
	f = binary.BigEndian.AppendUint16(f, uint16(version))
	f = binary.BigEndian.AppendUint32(f, uint32(corr))
	f = binary.BigEndian.AppendUint16(f, 0xffff) // null client id
	if flexible {
		f = append(f, 0) // no header tags
	}
	f = append(f, body...)
	binary.BigEndian.PutUint32(f, uint32(len(f)-4))
	return f
}

// Produce is a Produce request (acks=all, 10 s timeout) of batch to
// partition 0 of topic, at version, or at the version a kgo client
// negotiates when 0.
func Produce(topic string, version int16, batch []byte) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = version, -1, 10000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}
