package wire

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage/vfs"
)

// Zero-copy Fetch: how a Fetch response leaves.
//
// Kafka writes a Fetch response as a header buffer followed by the
// segment files' bytes moved with FileChannel.transferTo, i.e.
// sendfile(2) on plaintext connections (FileRecords.writeTo,
// PlaintextTransportLayer.transferFrom); on TLS it has to copy them
// through the JVM. We do the same around gnet, which has no sendfile and
// owns the socket: when a Fetch response whose data sits in descriptor-
// backed files reaches the head of its connection's queue, its writer (a
// request goroutine, see conn.complete) asks the event loop for the
// socket, and if the loop can give it, writes the response itself with
// send(2) and sendfile(2) on a duplicate of the descriptor. Otherwise it
// reads the data into one pooled buffer and hands that to gnet.
//
// The socket is lent for good. From the grant on, the connection's
// writer writes every response on the duplicate (Fetch data with
// sendfile, other frames with sendmsg) and gnet writes nothing more:
// a follower's or a consumer's fetch then costs no trip to the loop and
// no dup, registration and close per response, which on a busy cluster
// were a third of the system calls a response took.
//
// The grant (socketGrant.Run, on the loop). The socket is lent only when
//  1. OnClose has not run (cn.loopClosed): the descriptor is still this
//     connection's; gnet closes it in the same loop turn as OnClose, so a
//     check on the loop cannot be overtaken;
//  2. no AsyncWritev of ours is still queued (cn.gnetWrites == 0); and
//  3. gnet's outbound buffer is empty (gc.OutboundBuffered() == 0).
//
// Why nothing else reaches the socket once it is lent. gnet writes a
// connection's socket in exactly four places: the asyncWrite(v) tasks
// (only the writer queues them, and after the grant it never does);
// eventloop.write on EPOLLOUT (returns at once when the outbound buffer
// is empty, and only those tasks fill it); eventloop.close's final flush
// (same buffer); and OnOpen's return value (long past). So with 2 and 3
// holding at the grant they hold for the rest of the connection. Reading
// goes on meanwhile: a socket's read and write directions are
// independent, and OnTraffic keeps parsing requests, whose responses
// queue.
//
// A walk-through of the interleaving that matters, the connection closing
// mid-transfer:
//
//	writer: takes Fetch F off the queue, Execute(grant)
//	loop:   runs the queued AsyncWritev of the responses before F (FIFO:
//	        gnet runs tasks in the order queued; a low-priority task such
//	        as Execute never overtakes an earlier high-priority one)
//	loop:   grant: 1-3 hold; dup(2) the descriptor, keep it in cn.sock,
//	        hand it over
//	writer: send(2) header, sendfile(2) data ... EAGAIN: park in Go's
//	        netpoller on the dup, deadline = connections.max.idle.ms
//	loop:   client resets: OnClose → cn.closeConn closes cn.sock (the
//	        parked write wakes with an error) and cancels cn.ctx; gnet
//	        deletes its descriptor from epoll and closes it
//	kernel: the freed descriptor number is reused by the next accept(2)
//	writer: gives F's buffer back, drops what was queued behind F; the
//	        dup's close(2) ran when its last system call returned, and
//	        the socket is released
//
// Writing on gnet's own descriptor number instead of a dup would, at that
// last step, have written F's bytes into the newly accepted connection.
// Had the writer given up waiting for the grant (cn.ctx done) before the
// loop ran it, the dup the loop made is in cn.sock all the same, and
// closeConn closes it.
//
// A cold read (pages not in the page cache) happens inside sendfile(2) on
// the writer's goroutine, so it blocks that goroutine's thread and never
// the event loop. A client that stops reading parks the writer in the
// netpoller, not on a thread, and stalls only its own connection; after
// connections.max.idle.ms without progress the connection is closed, as
// Kafka's idle check would close it.
//
// A segment cut short under a transfer (sendfile returns 0 before the
// slice's end) cannot be patched: its length prefix is on the wire. Kafka
// throws in FileRecords.writeTo for the same case, which closes the
// connection; so do we. The pooled path, which reads before it frames,
// corrects the prefix instead (encodeFramed).

// defaultSendfileMin is the least file data a Fetch response needs for
// sendfile: below it a grant's round trip to the loop, for a connection
// whose socket is not lent yet, costs more than reading the data into a
// pooled buffer.
const defaultSendfileMin = 64 << 10

// errSegmentTruncated: a segment ended before the slice being sent.
var errSegmentTruncated = errors.New("wire: segment truncated during a sendfile transfer")

// directFetch is a Fetch response framed around its file data: hdr holds
// every byte that is not file data, and cut k's bytes go in at
// hdr[cuts[k].at], so the frame is hdr[:cuts[0].at], file 0,
// hdr[cuts[0].at:cuts[1].at], file 1, ..., hdr[cuts[last].at:].
type directFetch struct {
	fetch *fetchResponse // to encode the pooled way if the grant fails
	corr  int32
	hdr   []byte // from the server's pool
	cuts  []fileCut
	size  int // the whole frame, size prefix included
}

// fileCut is one partition's record data in a segment file.
type fileCut struct {
	at   int // where it goes in hdr
	file vfs.File
	src  directSource
	pos  int64
	n    int64
}

// directSource reaches a segment file's descriptor for sendfile. rc,
// when the file offers it (storage's OS files are *os.File), holds a
// reference on the descriptor for each call, so a segment closed by
// retention meanwhile cannot have its number reused under the transfer;
// fd is the bare descriptor of a file that offers only vfs.FD, which must
// then stay open until the transfer ends.
type directSource struct {
	rc syscall.RawConn
	fd int
}

// directSourceOf reports how to sendfile from f: f must offer vfs.FD,
// storage's promise that its bytes are in a kernel file.
func directSourceOf(f vfs.File) (directSource, bool) {
	fdf, ok := f.(vfs.FD)
	if !ok {
		return directSource{}, false
	}
	if sc, ok := f.(syscall.Conn); ok {
		rc, err := sc.SyscallConn()
		if err != nil {
			return directSource{}, false // closed
		}
		return directSource{rc: rc, fd: -1}, true
	}
	return directSource{fd: int(fdf.Fd())}, true
}

// encodeDirect frames f around its file data, or returns nil when f is
// not worth or not able to go out with sendfile: less than minFileBytes
// of file data, a file without a descriptor, or tagged fields the encoder
// does not write.
func (f *fetchResponse) encodeDirect(corr int32, pool *bufferPool, minFileBytes int) *directFetch {
	r := f.FetchResponse
	if hasUnknownTags(r) {
		return nil
	}
	fileBytes := 0
	for i := range r.Topics {
		for j := range r.Topics[i].Partitions {
			n, fromFile := f.recordsLen(i, j)
			if !fromFile {
				continue
			}
			if _, ok := f.slices[i][j].File.(vfs.FD); !ok {
				return nil
			}
			fileBytes += n
		}
	}
	if fileBytes == 0 || fileBytes < minFileBytes {
		return nil
	}
	meta, data := f.sizes()
	d := &directFetch{fetch: f, corr: corr, hdr: pool.get(meta + data - fileBytes)}
	ok := true
	d.hdr = f.appendFramed(d.hdr, corr, func(b []byte, i, j int, flexible bool) []byte {
		n, fromFile := f.recordsLen(i, j)
		if !fromFile {
			return appendMemRecords(b, &f.Topics[i].Partitions[j], flexible)
		}
		sl := f.slices[i][j]
		src, srcOK := directSourceOf(sl.File)
		ok = ok && srcOK
		b = appendRecordsPrefix(b, n, flexible)
		d.cuts = append(d.cuts, fileCut{at: len(b), file: sl.File, src: src, pos: sl.Position, n: int64(n)})
		return b
	})
	if !ok {
		pool.put(d.hdr)
		return nil
	}
	d.size = len(d.hdr) + fileBytes
	binary.BigEndian.PutUint32(d.hdr, uint32(d.size-4))
	return d
}

// part is the k-th run of header bytes: before cut k, or after the last.
func (d *directFetch) part(k int) []byte {
	from, to := 0, len(d.hdr)
	if k > 0 {
		from = d.cuts[k-1].at
	}
	if k < len(d.cuts) {
		to = d.cuts[k].at
	}
	return d.hdr[from:to]
}

// sendFetch writes a Fetch response that reached the head of the queue:
// with sendfile on the lent socket when the connection has it or the
// loop lends it now, else through a pooled buffer and gnet. Writer only.
func (cn *conn) sendFetch(o *outFrame) {
	s := cn.srv
	d := o.direct
	o.direct = nil
	// Counted before anything else, so Shutdown and the idle sweep never
	// see the connection quiet while the response is on its way.
	cn.unsent.Add(int64(d.size))
	sock := cn.lentSocket()
	if sock == nil && cn.ctx.Err() != nil {
		// Closed meanwhile: dropped, like the responses queued behind.
		s.bufs.put(d.hdr)
		cn.unsent.Add(-int64(d.size))
		cn.finished(1)
		return
	}
	if sock == nil {
		s.directFallbacks.Add(1)
		buf, err := d.fetch.encodeFramed(d.corr, &s.bufs)
		s.bufs.put(d.hdr)
		if err != nil {
			buf = encodeResponse(&s.bufs, d.corr, d.fetch) // not reached: encodeDirect checked the tags
		}
		o.buf = buf
		cn.writeFrames([]*outFrame{o})
		cn.unsent.Add(-int64(d.size))
		return
	}

	s.directSends.Add(1)
	sent, err := writeDirect(cn.ctx, sock, d, cn.stall(), cn.sentDirect)
	cn.unsent.Add(-int64(int64(d.size) - sent))
	s.bufs.put(d.hdr)
	if err != nil {
		cn.directFailed(err, sent, d.size)
	}
	s.metrics.RequestDone(o.key, o.version, s.clock.Now().Sub(o.received), err != nil)
	cn.finished(1)
}

// writeLent writes bufs, whole frames, on the lent socket, in one
// sendmsg(2) when the socket takes them all. Writer only.
func (cn *conn) writeLent(sock *directSocket, bufs [][]byte) bool {
	return cn.writeOwn(bufs, func(bufs [][]byte) (int64, error) {
		return writeBuffers(cn.ctx, sock, bufs, cn.stall(), cn.sentDirect)
	})
}

// writeOwn writes bufs with write, which the writer runs itself instead
// of handing them to gnet (the lent socket, a TLS connection), and gives
// them back to the pool once it returns; it reports whether the write
// failed (the connection is then closing). The bytes count in cn.unsent
// until write reports them sent (sentDirect), so a client that reads
// slowly stops the connection reading more requests. Writer only.
func (cn *conn) writeOwn(bufs [][]byte, write func([][]byte) (int64, error)) bool {
	size := 0
	for _, b := range bufs {
		size += len(b)
	}
	var err error
	if size > 0 {
		cn.unsent.Add(int64(size))
		var sent int64
		sent, err = write(bufs)
		cn.unsent.Add(-(int64(size) - sent))
		if err != nil {
			cn.directFailed(err, sent, size)
		}
	}
	for _, b := range bufs {
		cn.srv.bufs.put(b)
	}
	return err != nil
}

// stall is how long a direct write may wait for the client to read:
// connections.max.idle.ms, 0 for no limit.
func (cn *conn) stall() time.Duration {
	return max(cn.srv.cfg.ConnectionsMaxIdle, 0)
}

// sentDirect accounts n response bytes written on the lent socket.
func (cn *conn) sentDirect(n int) {
	cn.unsent.Add(-int64(n))
	cn.srv.metrics.BytesOut(n)
	cn.touch()
}

// directFailed closes the connection after a direct write failed: a
// partial frame may be on the socket, so nothing may follow it.
func (cn *conn) directFailed(err error, sent int64, size int) {
	if cn.ctx.Err() == nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			cn.srv.stalledWrites.Add(1)
		}
		cn.srv.logger.Info("closing connection: writing a response failed",
			"conn", cn.info.ConnID, "client", cn.info.ClientHost, "listener", cn.info.Listener,
			"sent", sent, "size", size, "err", err)
	}
	cn.abort()
}

// Grant states: the writer waits, gives up, or the loop grants.
const (
	grantWaiting int32 = iota
	grantAbandoned
	grantDone
)

// socketGrant asks the event loop for the connection's socket; see the
// walk-through above.
type socketGrant struct {
	cn    *conn
	state atomic.Int32
	sock  chan *directSocket // the lent socket, or nil: not now
}

// Run is the grant, on the loop. The socket it lends is stored in cn
// before the writer hears of it, so closeConn, which runs on this loop
// too, closes it whatever the writer does.
func (g *socketGrant) Run(context.Context) error {
	cn := g.cn
	var sock *directSocket
	if !cn.loopClosed && cn.gnetWrites.Load() == 0 && cn.gc.OutboundBuffered() == 0 {
		if d, err := dupSocket(cn.gc.Fd()); err == nil {
			if ds, err := newDirectSocket(d); err == nil {
				sock = ds
				cn.sock.Store(ds)
				cn.srv.socketsLent.Add(1)
			}
		}
	}
	if !g.state.CompareAndSwap(grantWaiting, grantDone) {
		return nil // the writer left: the connection is closing, closeConn closes sock
	}
	g.sock <- sock
	return nil
}

// lentSocket returns the connection's lent socket, asking the loop for
// it the first time and after a refusal, or nil: write through gnet.
func (cn *conn) lentSocket() *directSocket {
	if sock := cn.sock.Load(); sock != nil {
		return sock
	}
	if !sendfileSupported {
		return nil
	}
	g := &socketGrant{cn: cn, sock: make(chan *directSocket, 1)}
	if err := cn.gc.EventLoop().Execute(cn.ctx, g); err != nil {
		return nil
	}
	select {
	case sock := <-g.sock:
		return sock
	case <-cn.ctx.Done():
		if !g.state.CompareAndSwap(grantWaiting, grantAbandoned) {
			<-g.sock // granted meanwhile; closeConn closes it
		}
		return nil
	}
}

// encodeOut picks how a response will be written: deferred as a
// directFetch when it is a Fetch worth a sendfile on a connection that
// may use one, else encoded now into a pooled buffer.
func (cn *conn) encodeOut(out *outFrame, corr int32, resp kmsg.Response) {
	s := cn.srv
	if fr, ok := resp.(*fetchResponse); ok && cn.direct {
		if d := fr.encodeDirect(corr, &s.bufs, s.sendfileMin); d != nil {
			out.direct = d
			return
		}
	}
	out.buf = encodeResponse(&s.bufs, corr, resp)
}
