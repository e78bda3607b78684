package wire

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The paths a test forces: sendfile for every response with file data,
// or never.
var (
	forceSendfile = Config{sendfileMin: -1}
	forcePooled   = Config{DisableSendfile: true}
)

func requireSendfile(t *testing.T) {
	t.Helper()
	if !sendfileSupported {
		t.Skip("sendfile is Linux only")
	}
}

// fetchRequest asks for one partition of topic from offset, up to
// maxBytes, without waiting.
func fetchRequest(topic string, partition int32, offset int64, maxBytes int32) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version = 12
	req.ReplicaID = -1
	req.MaxBytes = maxBytes
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = partition, offset, maxBytes
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// readFetch reads a Fetch v12 response and checks its correlation id
// and that its records are byte for byte the file's, from byte 0.
func readFetch(t *testing.T, c *rawClient, corr int32, p *filePartition, timeout time.Duration) []byte {
	t.Helper()
	b := c.readFrame(timeout)
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = 12
	got, err := decodeResp(b, resp)
	if err != nil || got != corr {
		t.Fatalf("fetch response: corr %d (want %d), err %v", got, corr, err)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("fetch response shape: %d topics", len(resp.Topics))
	}
	rp := resp.Topics[0].Partitions[0]
	if rp.ErrorCode != 0 || rp.HighWatermark != p.end() {
		t.Fatalf("fetch partition: error %d, high watermark %d (want %d)", rp.ErrorCode, rp.HighWatermark, p.end())
	}
	if !bytes.Equal(rp.RecordBatches, p.data[:len(rp.RecordBatches)]) {
		t.Fatalf("fetch records (%d bytes) differ from the segment file", len(rp.RecordBatches))
	}
	return rp.RecordBatches
}

func readMetadata(t *testing.T, c *rawClient, corr int32) {
	t.Helper()
	resp := kmsg.NewPtrMetadataResponse()
	resp.Version = 12
	if got := c.readResp(resp); got != corr || len(resp.Brokers) != 1 {
		t.Fatalf("metadata response: corr %d (want %d), %d brokers", got, corr, len(resp.Brokers))
	}
}

func metadataRequest() *kmsg.MetadataRequest {
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	return req
}

// smallReadBuffer keeps the client's socket buffer small, so a response
// the client does not read stalls the server's write early.
func smallReadBuffer(c *rawClient) {
	if tc, ok := c.Conn.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(64 << 10)
	}
}

// theConn is the server's only connection.
func theConn(t *testing.T, s *Server) *conn {
	t.Helper()
	var cns []*conn
	waitFor(t, 5*time.Second, "the connection to open", func() bool {
		cns = s.listeners[0].snapshot()
		return len(cns) == 1
	})
	return cns[0]
}

// queued reports whether cn's writer is busy and n responses wait behind.
func (cn *conn) queued(n int) bool {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	return cn.writing && len(cn.pending) == n
}

// openSockets counts the process's socket descriptors: a duplicate left
// open by a transfer would show here (gnet's own pollers come and go on
// their own schedule, so other descriptors are not counted).
func openSockets(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot list descriptors: %v", err)
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.HasPrefix(l, "socket:") {
			n++
		}
	}
	return n
}

// settled waits until the server holds no connection and every response
// buffer is back in its pool.
func settled(t *testing.T, s *Server) {
	t.Helper()
	waitFor(t, 10*time.Second, "every connection closed and every buffer released", func() bool {
		return len(s.listeners[0].snapshot()) == 0 && s.bufs.outstanding() == 0
	})
}

// A kgo consumer reads a topic from offset 0 to its end through the real
// Fetch handler and gets byte-identical records, through sendfile and
// through pooled buffers; each path is forced and its use checked.
func TestCatchUpReadSendfileAndPooled(t *testing.T) {
	ft := newFileTopic(t, "cat", 2, 4<<20, 1000, 16)
	for _, tc := range []struct {
		name string
		cfg  Config
	}{{"sendfile", forceSendfile}, {"pooled", forcePooled}} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "sendfile" {
				requireSendfile(t)
			}
			s, _ := newFileServer(t, tc.cfg, ft)
			offsets := map[int32]kgo.Offset{}
			for pi := range ft.parts {
				offsets[int32(pi)] = kgo.NewOffset().At(0)
			}
			cl, err := kgo.NewClient(
				kgo.SeedBrokers(s.plaintextAddr()),
				kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{ft.name: offsets}),
				kgo.FetchMaxWait(100*time.Millisecond),
				kgo.FetchMaxPartitionBytes(1<<20),
			)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			next := make([]int64, len(ft.parts))
			remaining := int64(0)
			for _, p := range ft.parts {
				remaining += p.end()
			}
			for remaining > 0 {
				fs := cl.PollFetches(ctx)
				if ctx.Err() != nil {
					t.Fatalf("consumer stalled with %d records left", remaining)
				}
				fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
				fs.EachRecord(func(r *kgo.Record) {
					p := ft.parts[r.Partition]
					if r.Offset != next[r.Partition] || !bytes.Equal(r.Value, p.values[r.Offset]) {
						t.Fatalf("partition %d: record at offset %d (want %d) differs", r.Partition, r.Offset, next[r.Partition])
					}
					next[r.Partition]++
					remaining--
				})
			}
			cl.Close()
			sends, fallbacks := s.directSends.Load(), s.directFallbacks.Load()
			t.Logf("sendfile responses %d, fallbacks %d", sends, fallbacks)
			switch tc.name {
			case "sendfile":
				// 8 MiB in at most 1 MiB a partition: at least 4 responses.
				if sends < 4 || fallbacks != 0 {
					t.Fatalf("sendfile path: %d responses sent with sendfile, %d fell back", sends, fallbacks)
				}
			case "pooled":
				if sends != 0 || fallbacks != 0 {
					t.Fatalf("pooled path: %d responses sent with sendfile, %d fell back", sends, fallbacks)
				}
			}
			settled(t, s)
		})
	}
}

// A Metadata and an ApiVersions answer queued behind a Fetch being sent
// with sendfile wait for it and arrive after it, in request order, and the
// stalled transfer resumes where it stopped.
func TestPipelinedBehindSendfile(t *testing.T) {
	requireSendfile(t)
	ft := newFileTopic(t, "pipe", 1, 12<<20, 1000, 64)
	// Room for the whole response, so the server reads all three
	// requests whatever pieces TCP delivers them in.
	cfg := forceSendfile
	cfg.MaxBufferedResponseBytes = 128 << 20
	s, _ := newFileServer(t, cfg, ft)
	c := dialRaw(t, s.plaintextAddr())
	smallReadBuffer(c)
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version = 3
	av.ClientSoftwareName, av.ClientSoftwareVersion = "raw", "1.0"
	var batch []byte
	batch = append(batch, encodeRequest(1, "c", fetchRequest("pipe", 0, 0, 16<<20))...)
	batch = append(batch, encodeRequest(2, "c", metadataRequest())...)
	batch = append(batch, encodeRequest(3, "c", av)...)
	c.write(batch)

	cn := theConn(t, s)
	// The fetch's writer takes the writer role, then waits for the loop to
	// lend it the socket before it counts a sendfile response: the two
	// answers can queue behind it before that count moves.
	waitFor(t, 10*time.Second, "the two answers to queue behind the fetch being sent", func() bool {
		return cn.queued(2) && s.directSends.Load() > 0
	})
	if s.directSends.Load() != 1 {
		t.Fatalf("%d responses sent with sendfile, want the fetch", s.directSends.Load())
	}
	if u := cn.unsent.Load(); u <= 0 {
		t.Fatalf("the fetch transfer is not in progress: %d bytes unsent", u)
	}
	got := readFetch(t, c, 1, ft.parts[0], 20*time.Second)
	if len(got) < 12<<20 {
		t.Fatalf("fetch returned %d bytes, want the whole %d-byte file", len(got), len(ft.parts[0].data))
	}
	readMetadata(t, c, 2)
	avResp := kmsg.NewPtrApiVersionsResponse()
	avResp.Version = 3
	if corr := c.readResp(avResp); corr != 3 || avResp.ErrorCode != 0 {
		t.Fatalf("ApiVersions: corr %d error %d", corr, avResp.ErrorCode)
	}
	if f := s.directFallbacks.Load(); f != 0 {
		t.Fatalf("%d fallbacks", f)
	}
}

// A Fetch that reaches the head of the queue while gnet still holds
// output for the connection must not be sent with sendfile (its bytes
// would overtake gnet's): it goes through a pooled buffer behind them.
func TestSendfileFallsBackBehindQueuedOutput(t *testing.T) {
	requireSendfile(t)
	ft := newFileTopic(t, "fb", 1, 4<<20, 1000, 64)
	s, _ := newFileServer(t, forceSendfile, ft, bigStandIn(newProbe()))
	c := dialRaw(t, s.plaintextAddr())
	smallReadBuffer(c)
	var batch []byte
	batch = append(batch, encodeRequest(1, "c", bigRequest(8<<20, 0))...)
	batch = append(batch, encodeRequest(2, "c", fetchRequest("fb", 0, 0, 8<<20))...)
	batch = append(batch, encodeRequest(3, "c", metadataRequest())...)
	c.write(batch)
	waitFor(t, 10*time.Second, "the fetch to fall back", func() bool { return s.directFallbacks.Load() == 1 })

	resp := kmsg.NewPtrSASLAuthenticateResponse()
	resp.Version = 2
	if corr := c.readResp(resp); corr != 1 || len(resp.SASLAuthBytes) != 8<<20 {
		t.Fatalf("big response: corr %d, %d bytes", corr, len(resp.SASLAuthBytes))
	}
	readFetch(t, c, 2, ft.parts[0], 10*time.Second)
	readMetadata(t, c, 3)
	if n := s.directSends.Load(); n != 0 {
		t.Fatalf("%d responses sent with sendfile behind queued output", n)
	}
}

// A client that stops reading in the middle of a sendfile transfer of a
// file not in the page cache does not stall another connection on the
// same event loop: its ApiVersions
// round trips and its own sendfile Fetch go on; then the stalled transfer
// completes once its client reads.
func TestStalledSendfileDoesNotStallTheLoop(t *testing.T) {
	requireSendfile(t)
	ft := newFileTopic(t, "stall", 1, 16<<20, 1000, 64)
	s, _ := newFileServer(t, Config{EventLoops: 1, sendfileMin: -1}, ft)
	// Cold: the transfer reads the disk inside sendfile, on its own
	// goroutine.
	dropPageCache(t, ft.parts[0])
	slow := dialRaw(t, s.plaintextAddr())
	smallReadBuffer(slow)
	slow.send(1, fetchRequest("stall", 0, 0, 24<<20))
	cn := theConn(t, s)
	// Stalled: the transfer is under way and makes no more progress.
	var last int64 = -1
	waitFor(t, 10*time.Second, "the transfer to stall", func() bool {
		u := cn.unsent.Load()
		stalled := u > 0 && u == last
		last = u
		time.Sleep(20 * time.Millisecond)
		return stalled
	})

	other := dialRaw(t, s.plaintextAddr())
	var worst time.Duration
	for i := range 20 {
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = 3
		req.ClientSoftwareName, req.ClientSoftwareVersion = "raw", "1.0"
		began := time.Now()
		other.send(int32(i), req)
		resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
		if _, err := other.tryReadFrame(2 * time.Second); err != nil {
			t.Fatalf("ApiVersions round trip %d on the same loop: %v", i, err)
		}
		_ = resp
		worst = max(worst, time.Since(began))
	}
	other.send(100, fetchRequest("stall", 0, 0, 1<<20))
	readFetch(t, other, 100, ft.parts[0], 5*time.Second)
	t.Logf("slowest ApiVersions round trip beside the stalled transfer: %v", worst)

	got := readFetch(t, slow, 1, ft.parts[0], 20*time.Second)
	if len(got) < 16<<20 {
		t.Fatalf("stalled fetch returned %d bytes", len(got))
	}
	if n := s.directSends.Load(); n != 2 {
		t.Fatalf("%d responses sent with sendfile, want 2", n)
	}
}

// A client that closes in the middle of a transfer costs nothing: the
// connection is closed, every buffer (the transfer's and the queued
// responses') is released and no descriptor is left open, on both paths.
func TestCloseMidTransferReleasesEverything(t *testing.T) {
	ft := newFileTopic(t, "close", 1, 12<<20, 1000, 64)
	for _, tc := range []struct {
		name string
		cfg  Config
	}{{"sendfile", forceSendfile}, {"pooled", forcePooled}} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "sendfile" {
				requireSendfile(t)
			}
			cfg := tc.cfg
			cfg.MaxBufferedResponseBytes = 128 << 20 // read all three requests
			s, _ := newFileServer(t, cfg, ft)
			sockets := openSockets(t)
			for i := range 3 {
				c := dialRaw(t, s.plaintextAddr())
				smallReadBuffer(c)
				var batch []byte
				batch = append(batch, encodeRequest(1, "c", fetchRequest("close", 0, 0, 16<<20))...)
				batch = append(batch, encodeRequest(2, "c", metadataRequest())...)
				batch = append(batch, encodeRequest(3, "c", fetchRequest("close", 0, 0, 1<<20))...)
				c.write(batch)
				buf := make([]byte, 256<<10)
				if _, err := c.Read(buf); err != nil {
					t.Fatalf("read: %v", err)
				}
				if i == 0 && tc.name == "sendfile" {
					cn := theConn(t, s)
					waitFor(t, 10*time.Second, "the answers to queue behind the fetch", func() bool { return cn.queued(2) })
				}
				c.Close()
				settled(t, s)
			}
			if tc.name == "sendfile" && s.directSends.Load() < 3 {
				t.Fatalf("%d responses sent with sendfile, want 3", s.directSends.Load())
			}
			waitFor(t, 5*time.Second, "every socket descriptor closed", func() bool { return openSockets(t) <= sockets })
			apiVersionsOK(t, s.plaintextAddr())
		})
	}
}

// A client that reads nothing of a transfer for connections.max.idle.ms
// is closed, like an idle connection, and its buffers are released.
func TestStalledSendfileClosedAfterIdleTimeout(t *testing.T) {
	requireSendfile(t)
	ft := newFileTopic(t, "idle", 1, 12<<20, 1000, 64)
	cfg := forceSendfile
	cfg.ConnectionsMaxIdle = 300 * time.Millisecond
	s, _ := newFileServer(t, cfg, ft)
	c := dialRaw(t, s.plaintextAddr())
	smallReadBuffer(c)
	began := time.Now()
	c.send(1, fetchRequest("idle", 0, 0, 16<<20))
	waitFor(t, 5*time.Second, "the transfer to start", func() bool { return s.directSends.Load() == 1 })
	settled(t, s)
	if d := time.Since(began); d < 300*time.Millisecond {
		t.Fatalf("closed after %v, before connections.max.idle.ms", d)
	}
	if s.directSends.Load() != 1 {
		t.Fatalf("%d responses sent with sendfile", s.directSends.Load())
	}
}

// Pooled buffers are released only once gnet is done with them: many
// connections pipeline fetches and read slowly, so responses sit in
// gnet's outbound buffers while others are encoded from the pool;
// released buffers are scribbled on (newTestServerSvc), so one released
// early would arrive corrupt, or race under -race.
func TestPooledBuffersNotReusedWhileQueued(t *testing.T) {
	ft := newFileTopic(t, "pool", 1, 2<<20, 1000, 16)
	s, _ := newFileServer(t, Config{MaxInflightRequests: 8, sendfileMin: 1 << 30}, ft)
	const conns, perConn = 4, 24
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for ci := range conns {
		c := dialRaw(t, s.plaintextAddr())
		smallReadBuffer(c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			var batch []byte
			for i := range perConn {
				if i%3 == 2 {
					batch = append(batch, encodeRequest(int32(i), "c", metadataRequest())...)
					continue
				}
				// Sizes vary, so buffers of several classes are reused.
				batch = append(batch, encodeRequest(int32(i), "c", fetchRequest("pool", 0, 0, int32(64<<10<<(i%5))))...)
			}
			go func() { _, _ = c.Write(batch) }()
			for i := range perConn {
				time.Sleep(time.Millisecond)
				b, err := c.tryReadFrame(20 * time.Second)
				if err != nil {
					errs <- fmt.Errorf("conn %d response %d: %w", ci, i, err)
					return
				}
				if i%3 == 2 {
					resp := kmsg.NewPtrMetadataResponse()
					resp.Version = 12
					if corr, err := decodeResp(b, resp); err != nil || corr != int32(i) || len(resp.Brokers) != 1 {
						errs <- fmt.Errorf("conn %d metadata %d: corr %d err %v", ci, i, corr, err)
						return
					}
					continue
				}
				resp := kmsg.NewPtrFetchResponse()
				resp.Version = 12
				corr, err := decodeResp(b, resp)
				if err != nil || corr != int32(i) {
					errs <- fmt.Errorf("conn %d fetch %d: corr %d err %v", ci, i, corr, err)
					return
				}
				rec := resp.Topics[0].Partitions[0].RecordBatches
				if len(rec) == 0 || !bytes.Equal(rec, ft.parts[0].data[:len(rec)]) {
					errs <- fmt.Errorf("conn %d fetch %d: %d record bytes differ from the file", ci, i, len(rec))
					return
				}
			}
			c.Close()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	settled(t, s)
	if s.bufs.gets.Load() < conns*perConn {
		t.Fatalf("%d buffers taken from the pool for %d responses", s.bufs.gets.Load(), conns*perConn)
	}
}
