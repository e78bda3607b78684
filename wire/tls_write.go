package wire

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// Responses of SSL and SASL_SSL connections go straight into the
// tls.Conn, from the connection's writer (conn.complete), never through
// gnet: gnet would copy every response into its outbound buffer, flush it
// into the relay's socketpair about 200 KiB at a time and leave the rest
// in freshly allocated buffers, and the relay would copy it once more
// (issue 25 measured ~40% of the broker's CPU and a resident size that
// grew with the data read on a TLS catch-up). The single writer keeps the
// order as it does for the lent socket of a plaintext connection
// (sendfile.go), the model for this path:
//   - the bytes being written count in cn.unsent until they are in the
//     tls.Conn, so a writer blocked on a client that reads slowly keeps
//     the connection from reading more requests (overLimit), and the
//     writer's finished() wakes the loop when they drain;
//   - a buffer goes back to the pool once the Write carrying it returns;
//   - a write that makes no progress for connections.max.idle.ms (the
//     lent socket's stall limit, Kafka's idle close) fails, and the
//     connection is aborted (cn.directFailed) and counted
//     (Server.stalledWrites);
//   - the connection closing from either side ends a blocked Write: the
//     client going away makes the relay close the tls.Conn (tls.go), the
//     loop closing the connection cancels cn.ctx, which puts the write
//     deadline in the past; the writer then drops what is left, as
//     abort() does.
//
// crypto/tls allows Write concurrently with the relay's Read. Reading
// stays as it was: TLS -> relay -> socketpair -> gnet's framing.

const (
	// tlsWriteChunk is the most one Write is given, so the stall limit
	// is "no progress for connections.max.idle.ms" rather than a bound
	// on a whole 50 MiB response, and cn.unsent drains as it goes.
	tlsWriteChunk = 256 << 10
	// tlsGatherBelow: frames smaller than a TLS record's 16 KiB of
	// plaintext are gathered into one Write (one pooled copy), so
	// pipelined small responses share records and system calls as they
	// shared the relay's reads before.
	tlsGatherBelow = 16 << 10
)

// tlsWriter is an SSL connection's tls.Conn as its writer holds it.
type tlsWriter struct {
	tc   *tls.Conn
	pool *bufferPool

	mu       sync.Mutex
	writing  bool // a Write is under way (its deadline may be moved)
	canceled bool // the connection closed: no Write starts, the deadline stays past
}

func newTLSWriter(tc *tls.Conn, pool *bufferPool) *tlsWriter {
	return &tlsWriter{tc: tc, pool: pool}
}

// write writes bufs, whole frames, in order, calling progress with every
// chunk the tls.Conn took; it returns how many bytes it took. Writer only.
func (w *tlsWriter) write(ctx context.Context, bufs [][]byte, stall time.Duration, progress func(int)) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("wire: connection closed: %w", err)
	}
	stop := context.AfterFunc(ctx, w.cancel)
	defer stop()
	var sent int64
	for i, off := 0, 0; i < len(bufs); {
		var p []byte
		gathered := false
		if k, size := gatherable(bufs[i:]); off == 0 && k > 1 {
			p = w.pool.get(size)
			for _, b := range bufs[i : i+k] {
				p = append(p, b...)
			}
			i += k
			gathered = true
		} else {
			b := bufs[i]
			p = b[off:min(len(b), off+tlsWriteChunk)]
			off += len(p)
			if off == len(b) {
				i, off = i+1, 0
			}
		}
		n, err := w.writeChunk(p, stall)
		if gathered {
			w.pool.put(p)
		}
		if n > 0 {
			sent += int64(n)
			progress(n)
		}
		if err != nil {
			switch {
			case ctx.Err() != nil:
				return sent, fmt.Errorf("wire: connection closed during a response: %w", ctx.Err())
			case errors.Is(err, os.ErrDeadlineExceeded):
				return sent, fmt.Errorf("wire: client read nothing for %v (connections.max.idle.ms): %w", stall, err)
			default:
				return sent, fmt.Errorf("wire: sending a response over TLS: %w", err)
			}
		}
	}
	return sent, nil
}

// gatherable is how many of the leading small frames fit one gathered
// Write, and their size.
func gatherable(bufs [][]byte) (k, size int) {
	for _, b := range bufs {
		if len(b) >= tlsGatherBelow || size+len(b) > tlsWriteChunk {
			break
		}
		k++
		size += len(b)
	}
	return k, size
}

// writeChunk is one Write, bounded by the stall limit (0: none).
func (w *tlsWriter) writeChunk(p []byte, stall time.Duration) (int, error) {
	w.mu.Lock()
	if w.canceled {
		w.mu.Unlock()
		return 0, errTLSWriterCanceled
	}
	if stall > 0 {
		_ = w.tc.SetWriteDeadline(time.Now().Add(stall))
	}
	w.writing = true
	w.mu.Unlock()
	n, err := w.tc.Write(p)
	w.mu.Lock()
	w.writing = false
	w.mu.Unlock()
	return n, err
}

// cancel ends a Write under way and refuses later ones: the connection
// closed. It only moves a deadline, so it never blocks (closeConn runs
// on the event loop); with no Write under way the deadline is left alone,
// so the relay's Close can still send close_notify.
func (w *tlsWriter) cancel() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.canceled = true
	if w.writing {
		_ = w.tc.SetWriteDeadline(time.Unix(1, 0))
	}
}

var errTLSWriterCanceled = errors.New("wire: the connection closed")

// writeTLS writes bufs on the connection's tls.Conn and gives them back
// to the pool; it reports whether the write failed (the connection is
// then closing). Writer only.
func (cn *conn) writeTLS(bufs [][]byte) bool {
	return cn.writeOwn(bufs, func(bufs [][]byte) (int64, error) {
		return cn.tlsOut.write(cn.ctx, bufs, cn.stall(), cn.sentDirect)
	})
}
