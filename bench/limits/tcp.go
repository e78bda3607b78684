package limits

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// tcpChunk is the size of each loopback write and read: large enough that
// per-call cost does not set the ceiling.
const tcpChunk = 256 << 10

// sink accepts one connection and counts the bytes read until EOF, timing
// from the first byte to EOF.
type sink struct {
	ln   net.Listener
	done chan sinkResult
}

type sinkResult struct {
	bytes   int64
	elapsed time.Duration
	err     error
}

func newSink() (*sink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("limits: listen: %w", err)
	}
	s := &sink{ln: ln, done: make(chan sinkResult, 1)}
	go func() {
		c, err := ln.Accept()
		if err != nil {
			s.done <- sinkResult{err: err}
			return
		}
		defer c.Close()
		buf := make([]byte, tcpChunk)
		var r sinkResult
		var start time.Time
		for {
			n, err := c.Read(buf)
			if n > 0 && r.bytes == 0 {
				start = time.Now()
			}
			r.bytes += int64(n)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				r.err = err
				break
			}
		}
		if r.bytes > 0 {
			r.elapsed = time.Since(start)
		}
		s.done <- r
	}()
	return s, nil
}

func (s *sink) addr() string { return s.ln.Addr().String() }

// wait closes the listener and returns what the sink read.
func (s *sink) wait() sinkResult {
	r := <-s.done
	s.ln.Close()
	return r
}

// tcpProbe writes over a loopback connection for Time: the ceiling of
// moving bytes through the kernel's TCP stack and two copies, which bounds
// a broker that serves fetches from user-space buffers.
func tcpProbe(ctx context.Context, cfg Config) (Probe, error) {
	var p Probe
	s, err := newSink()
	if err != nil {
		return p, err
	}
	c, err := net.Dial("tcp", s.addr())
	if err != nil {
		s.ln.Close()
		return p, fmt.Errorf("limits: dial: %w", err)
	}
	buf := make([]byte, tcpChunk)
	_, _ = rand.Read(buf)
	deadline := time.Now().Add(cfg.Time)
	var werr error
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if _, werr = c.Write(buf); werr != nil {
			break
		}
	}
	c.Close()
	r := s.wait()
	p.finish(r.bytes, r.elapsed)
	switch {
	case werr != nil:
		return p, fmt.Errorf("limits: write: %w", werr)
	case r.err != nil:
		return p, fmt.Errorf("limits: read: %w", r.err)
	case r.bytes == 0:
		return p, errNoProgress
	}
	return p, nil
}

// sendfileFileBytes is the file sendfile serves over and over: small enough
// to stay in the page cache, as a broker's hot segment tail does.
const sendfileFileBytes = 64 << 20

// sendfileProbe serves a cached file to a loopback socket with sendfile(2)
// for Time: the ceiling of a broker's zero-copy fetch path (Kafka's
// FileRecords.writeTo → FileChannel.transferTo).
func sendfileProbe(ctx context.Context, cfg Config) (Probe, error) {
	var p Probe
	f, err := os.CreateTemp(cfg.Dir, "strait-limits-sendfile-*")
	if err != nil {
		return p, fmt.Errorf("limits: %w", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	chunk := make([]byte, 1<<20)
	_, _ = rand.Read(chunk)
	for written := 0; written < sendfileFileBytes; written += len(chunk) {
		if _, err := f.Write(chunk); err != nil {
			return p, fmt.Errorf("limits: write: %w", err)
		}
	}

	s, err := newSink()
	if err != nil {
		return p, err
	}
	c, err := net.Dial("tcp", s.addr())
	if err != nil {
		s.ln.Close()
		return p, fmt.Errorf("limits: dial: %w", err)
	}
	rc, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		c.Close()
		s.wait()
		return p, fmt.Errorf("limits: %w", err)
	}
	in := int(f.Fd())
	deadline := time.Now().Add(cfg.Time)
	var off int64
	var serr error
	// The socket is non-blocking: on EAGAIN we return false and the
	// runtime poller calls us again once it is writable.
	werr := rc.Write(func(fd uintptr) bool {
		for time.Now().Before(deadline) && ctx.Err() == nil {
			if off >= sendfileFileBytes {
				off = 0
			}
			_, err := unix.Sendfile(int(fd), in, &off, int(sendfileFileBytes-off))
			if errors.Is(err, unix.EAGAIN) {
				return false
			}
			if err != nil {
				serr = err
				return true
			}
		}
		return true
	})
	c.Close()
	r := s.wait()
	p.finish(r.bytes, r.elapsed)
	switch {
	case werr != nil:
		return p, fmt.Errorf("limits: sendfile: %w", werr)
	case serr != nil:
		return p, fmt.Errorf("limits: sendfile: %w", serr)
	case r.err != nil:
		return p, fmt.Errorf("limits: read: %w", r.err)
	case r.bytes == 0:
		return p, errNoProgress
	}
	return p, nil
}
