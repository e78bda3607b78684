package e2e

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/wire/rawconn"
)

// Issue 26: bad input against the strait binary. Each test starts a
// broker, feeds it one kind of input no client library sends, and checks
// what Kafka does with it (Kafka's SocketServer closes a connection whose
// frame it cannot take or whose header it cannot parse; a request it can
// parse gets an error code), that the process stays up and keeps serving
// a well-behaved client after each, and that the log holds exactly what
// that client had acknowledged.

// badInputTopic is the topic the well-behaved client writes.
const badInputTopic = "safe"

// badInputBroker is one strait process under bad input.
type badInputBroker struct {
	n     *node
	p     *proc
	addr  string
	good  *kgo.Client
	acked []string // the values the well-behaved client got acknowledged, in order
}

func startBadInputBroker(t *testing.T, extra ...string) *badInputBroker {
	t.Helper()
	n := newNode(t, extra...)
	b := &badInputBroker{n: n, p: n.start(), addr: n.kafkaAddr()}
	createTopic(t, newAdmin(t, b.addr), badInputTopic, 1)
	b.good = newClient(t, b.addr, kgo.DefaultProduceTopic(badInputTopic), kgo.RequiredAcks(kgo.AllISRAcks()))
	b.stillServed(t, "start")
	return b
}

// stillServed fails unless the process runs, answers ApiVersions on a new
// connection, and acknowledges a record of the well-behaved client.
func (b *badInputBroker) stillServed(t *testing.T, after string) {
	t.Helper()
	if b.p.exited() {
		t.Fatalf("the broker exited after %s:\n%s", after, tail(b.p.stderr(), 3000))
	}
	if err := apiVersions(rawconn.Dial(t, b.addr).C); err != nil {
		t.Fatalf("after %s, ApiVersions on a new connection: %v", after, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	value := "after " + after
	if err := b.good.ProduceSync(ctx, kgo.StringRecord(value)).FirstErr(); err != nil {
		t.Fatalf("after %s the well-behaved client is not served: %v", after, err)
	}
	b.acked = append(b.acked, value)
}

// checkLog fails unless the topic holds exactly the acknowledged records:
// nothing lost, nothing a bad request carried added.
func (b *badInputBroker) checkLog(t *testing.T) {
	t.Helper()
	recs, ends := readAll(t, b.addr, badInputTopic)
	if ends[0] != int64(len(b.acked)) {
		t.Fatalf("%s ends at %d, want %d: the acknowledged records and nothing else", badInputTopic, ends[0], len(b.acked))
	}
	for i, r := range recs {
		if r.offset != int64(i) || r.value != b.acked[i] {
			t.Fatalf("record %d is %q at offset %d, want %q", i, r.value, r.offset, b.acked[i])
		}
	}
}

// TestBadInputFrameLengths: a size prefix of 2 GiB - 1, one that is
// negative as an int32 (2 GiB and -16), and one just over
// socket.request.max.bytes are each refused at the prefix: the broker
// closes the connection without reading further or answering, as Kafka's
// NetworkReceive throws InvalidReceiveException and the Selector closes the
// channel, and before allocating anything of that size.
func TestBadInputFrameLengths(t *testing.T) {
	b := startBadInputBroker(t)
	for _, c := range []struct {
		name   string
		prefix uint32
	}{
		{"a 2 GiB - 1 length prefix", 0x7fffffff},
		{"a 2 GiB length prefix, negative as int32", 0x80000000},
		{"a -16 length prefix", 0xfffffff0},
		{"a length prefix just over socket.request.max.bytes", 104857600 + 1},
	} {
		rc := rawconn.Dial(t, b.addr)
		// Some bytes of a frame after the prefix: the broker must not
		// wait for the rest.
		rc.MustWrite(append(binary.BigEndian.AppendUint32(nil, c.prefix), 0, 18, 0, 3, 0, 0, 0, 1))
		rc.ExpectClosed(c.name, 10*time.Second)
		b.stillServed(t, c.name)
	}
	b.checkLog(t)
}

// TestBadInputGarbage: a mebibyte of random bytes, then a mebibyte frame
// of random bytes, then a Produce request whose body is a mebibyte of
// random bytes. Each connection is closed without an answer and the
// garbage stores nothing. Where the random prefix announces a frame the
// broker may take, it waits for the rest like Kafka, until
// connections.max.idle.ms (here 2 s) closes the connection.
func TestBadInputGarbage(t *testing.T) {
	b := startBadInputBroker(t, "connections.max.idle.ms=2000")
	rng := rand.New(rand.NewPCG(26, 1))
	garbage := func(n int) []byte {
		g := make([]byte, n)
		for i := range g {
			g[i] = byte(rng.Uint32())
		}
		return g
	}
	const mib = 1 << 20
	stream := garbage(mib)
	frame := binary.BigEndian.AppendUint32(nil, mib-4)
	frame = append(frame, garbage(mib-4)...)
	produce := rawconn.Frame(int16(kmsg.Produce), 9, 1, true, garbage(mib))
	for _, c := range []struct {
		name  string
		bytes []byte
	}{
		{fmt.Sprintf("1 MiB of random bytes (a %d-byte length prefix)", int32(binary.BigEndian.Uint32(stream))), stream},
		{"a 1 MiB frame of random bytes", frame},
		{"a Produce v9 request with a 1 MiB body of random bytes", produce},
	} {
		rc := rawconn.Dial(t, b.addr)
		_ = rc.Write(c.bytes) // the broker may close before taking it all
		rc.ExpectClosed(c.name, 15*time.Second)
		b.stillServed(t, c.name)
	}
	b.checkLog(t)
}

// TestBadInputUnknownAPIKeyAndVersion: a request with an API key Kafka
// does not define, one with a negative key, and a Metadata request at a
// version above the broker's range each close the connection without an
// answer, as Kafka's SocketServer does when parseRequestHeader finds the
// API or version not enabled (InvalidRequestException). ApiVersions is the
// exception (ApiKeys.isVersionEnabled accepts any version of it): an
// ApiVersions request above our range is answered in v0 with
// UNSUPPORTED_VERSION and ApiVersions' own range (KIP-511), and the
// connection stays open for the client to ask again at a version we serve.
func TestBadInputUnknownAPIKeyAndVersion(t *testing.T) {
	b := startBadInputBroker(t)
	for _, c := range []struct {
		name  string
		frame []byte
	}{
		{"an unknown API key (999)", rawconn.Frame(999, 0, 1, false, nil)},
		{"a negative API key", rawconn.Frame(-1, 0, 1, false, nil)},
		{"Metadata v99", rawconn.Frame(int16(kmsg.Metadata), 99, 1, true, []byte{1, 0, 0})},
	} {
		rc := rawconn.Dial(t, b.addr)
		rc.MustWrite(c.frame)
		rc.ExpectClosed(c.name, 10*time.Second)
		b.stillServed(t, c.name)
	}

	rc := rawconn.Dial(t, b.addr)
	v3 := kmsg.NewPtrApiVersionsRequest()
	v3.Version, v3.ClientSoftwareName, v3.ClientSoftwareVersion = 3, "e2e", "1"
	rc.MustWrite(rawconn.Frame(int16(kmsg.ApiVersions), 99, 7, true, v3.AppendTo(nil)))
	v0 := kmsg.NewPtrApiVersionsRequest() // the answer is read as v0
	_ = rc.C.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := rawconn.ReadResponse(rc.R, v0, 7)
	if err != nil {
		t.Fatalf("ApiVersions v99: %v", err)
	}
	av := resp.(*kmsg.ApiVersionsResponse)
	if av.ErrorCode != kerr.UnsupportedVersion.Code || len(av.ApiKeys) != 1 || av.ApiKeys[0].ApiKey != int16(kmsg.ApiVersions) {
		t.Fatalf("ApiVersions v99 answered %v with %+v, want UNSUPPORTED_VERSION and ApiVersions' range alone", kerr.ErrorForCode(av.ErrorCode), av.ApiKeys)
	}
	if got := rc.RoundTrip(v3).(*kmsg.ApiVersionsResponse); got.ErrorCode != 0 || len(got.ApiKeys) < 10 {
		t.Fatalf("ApiVersions v3 after v99 on the same connection: %v, %d keys", kerr.ErrorForCode(got.ErrorCode), len(got.ApiKeys))
	}
	b.stillServed(t, "ApiVersions v99")
	b.checkLog(t)
}

// TestBadInputTruncatedRequest: a frame cut short, once followed by the
// client's half-close and once by silence, and requests whose frames are
// whole but whose bodies end early (ApiVersions v3, Produce v9). The
// half-closed and the short-bodied ones are closed at once without an
// answer; the silent one when connections.max.idle.ms (here 2 s) passes,
// as Kafka's Selector expires it. Nothing of the cut Produce is stored.
func TestBadInputTruncatedRequest(t *testing.T) {
	b := startBadInputBroker(t, "connections.max.idle.ms=2000")
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version, av.ClientSoftwareName, av.ClientSoftwareVersion = 3, "e2e", "1"
	whole := kmsg.NewRequestFormatter().AppendRequest(nil, av, 1)
	cut := append(binary.BigEndian.AppendUint32(nil, uint32(len(whole)-4+50)), whole[4:]...) // 50 bytes never come

	rc := rawconn.Dial(t, b.addr)
	rc.MustWrite(cut)
	if err := rc.C.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	rc.ExpectClosed("a cut frame, then the client's half-close", 10*time.Second)
	b.stillServed(t, "a cut frame and a half-close")

	rc = rawconn.Dial(t, b.addr)
	rc.MustWrite(cut)
	start := time.Now()
	rc.ExpectClosed("a cut frame, then silence", 20*time.Second)
	t.Logf("the silent cut frame was closed after %v (connections.max.idle.ms 2000)", time.Since(start).Round(100*time.Millisecond))
	b.stillServed(t, "a cut frame and silence")

	produce := rawconn.Produce(badInputTopic, 9, plainBatch(t, "cut"))
	for _, c := range []struct {
		name string
		req  kmsg.Request
	}{
		{"an ApiVersions v3 body cut inside its frame", av},
		{"a Produce v9 body cut inside its frame", produce},
	} {
		f := kmsg.NewRequestFormatter().AppendRequest(nil, c.req, 1)
		f = f[:len(f)-len(f)/4] // the last quarter of the body is missing
		binary.BigEndian.PutUint32(f, uint32(len(f)-4))
		rc := rawconn.Dial(t, b.addr)
		rc.MustWrite(f)
		rc.ExpectClosed(c.name, 10*time.Second)
		b.stillServed(t, c.name)
	}
	b.checkLog(t)
}

// TestBadInputCorruptCRC: a Produce of a batch whose CRC does not match
// its bytes is answered CORRUPT_MESSAGE for its partition, as Kafka's
// LogValidator rejects it (InvalidRecordException → CORRUPT_MESSAGE);
// nothing of it is stored, and the connection stays usable: a partition
// error is an answer, not a reason to close.
func TestBadInputCorruptCRC(t *testing.T) {
	b := startBadInputBroker(t)
	batch := plainBatch(t, "corrupt")
	batch[len(batch)-2] ^= 0xff // a value byte: the CRC no longer matches
	rc := rawconn.Dial(t, b.addr)
	resp := rc.RoundTrip(rawconn.Produce(badInputTopic, 9, batch)).(*kmsg.ProduceResponse)
	if code := resp.Topics[0].Partitions[0].ErrorCode; code != kerr.CorruptMessage.Code {
		t.Fatalf("a corrupt batch: %v, want CORRUPT_MESSAGE", kerr.ErrorForCode(code))
	}
	good := rc.RoundTrip(rawconn.Produce(badInputTopic, 9, plainBatch(t, "after a corrupt batch, on its connection"))).(*kmsg.ProduceResponse)
	if code := good.Topics[0].Partitions[0].ErrorCode; code != 0 {
		t.Fatalf("a good batch on the corrupt batch's connection: %v", kerr.ErrorForCode(code))
	}
	b.acked = append(b.acked, "after a corrupt batch, on its connection")
	b.stillServed(t, "a corrupt batch")
	b.checkLog(t)
}

// plainBatch is an uncompressed batch of one record holding value.
func plainBatch(t *testing.T, value string) []byte {
	t.Helper()
	batch, err := record.Build(record.BatchSpec{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, PartitionLeaderEpoch: -1,
		BaseTimestamp: time.Now().UnixMilli()},
		[]record.Record{{KeyLen: -1, ValueLen: int32(len(value)), Value: []byte(value)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return batch
}

// TestBadInputDecompressionBombs: a gzip batch whose one record expands to
// 512 MiB of zeros and a zstd batch whose one record expands to 1 GiB,
// each well under message.max.bytes compressed, are produced three times
// each. The broker refuses them MESSAGE_TOO_LARGE once decompressing
// passes its bound and stores nothing, and its resident set rises by less
// than bombRiseFactor × message.max.bytes over the idle figure: the
// records are decompressed as a stream, never held whole. (Kafka keeps
// such a batch, its validator streaming the records without a bound;
// storage/validator bounds the decompressed size too.) The peak is the
// process's VmHWM, reset after the broker warmed up.
func TestBadInputDecompressionBombs(t *testing.T) {
	const (
		maxMessageBytes = 1048588 // Kafka's default message.max.bytes
		bombRiseFactor  = 16
	)
	b := startBadInputBroker(t)
	pid := b.p.cmd.Process.Pid
	bombs := []struct {
		name  string
		codec record.Codec
		zeros int64
	}{
		{"gzip", record.CodecGzip, 512 << 20},
		{"zstd", record.CodecZstd, 1 << 30},
	}
	batches := make([][]byte, len(bombs))
	for i, bomb := range bombs {
		batches[i] = bombBatch(t, bomb.codec, bomb.zeros)
		if len(batches[i]) >= maxMessageBytes {
			t.Fatalf("the %s bomb is %d bytes, not under message.max.bytes", bomb.name, len(batches[i]))
		}
	}
	resetPeakRSS(t, pid)
	idle := procStatusBytes(t, pid, "VmRSS")
	for i, bomb := range bombs {
		rc := rawconn.Dial(t, b.addr)
		for range 3 {
			resp := rc.RoundTrip(rawconn.Produce(badInputTopic, 9, batches[i])).(*kmsg.ProduceResponse)
			if code := resp.Topics[0].Partitions[0].ErrorCode; code != kerr.MessageTooLarge.Code {
				t.Fatalf("a %d-byte %s batch expanding to %d MiB: %v, want MESSAGE_TOO_LARGE", len(batches[i]), bomb.name, bomb.zeros>>20, kerr.ErrorForCode(code))
			}
		}
		b.stillServed(t, "a "+bomb.name+" bomb")
	}
	peak := procStatusBytes(t, pid, "VmHWM")
	t.Logf("bombs of %d (gzip) and %d (zstd) bytes: idle VmRSS %d MiB, peak VmHWM %d MiB, a rise of %.1f MiB (bound %d MiB, %d × message.max.bytes)",
		len(batches[0]), len(batches[1]), idle>>20, peak>>20, float64(peak-idle)/(1<<20), bombRiseFactor*maxMessageBytes>>20, bombRiseFactor)
	if rise := peak - idle; rise > bombRiseFactor*maxMessageBytes {
		t.Errorf("the resident set rose by %d MiB under the bombs, want at most %d MiB", rise>>20, bombRiseFactor*maxMessageBytes>>20)
	}
	b.checkLog(t)
}

// bombBatch is a batch compressed with codec holding one record whose
// value is zeros zero bytes (null key, no headers). The compressed
// records are a stream of independently compressed pieces (gzip members,
// zstd frames), which both codecs decode as one: the record's prefix, then
// the same compressed mebibyte of zeros over and over, then the rest.
func bombBatch(t *testing.T, codec record.Codec, zeros int64) []byte {
	t.Helper()
	c := record.NewCompressor()
	compress := func(raw []byte) []byte {
		out, err := c.Compress(codec, nil, raw)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	var rec []byte
	rec = append(rec, 0)                  // attributes
	rec = binary.AppendVarint(rec, 0)     // timestamp delta
	rec = binary.AppendVarint(rec, 0)     // offset delta
	rec = binary.AppendVarint(rec, -1)    // null key
	rec = binary.AppendVarint(rec, zeros) // value length
	length := int64(len(rec)) + zeros + 1 // the value, then the header count (a zero)
	body := compress(append(binary.AppendVarint(nil, length), rec...))
	const mib = 1 << 20
	mibOfZeros := compress(make([]byte, mib))
	for range zeros / mib {
		body = append(body, mibOfZeros...)
	}
	body = append(body, compress(make([]byte, zeros%mib+1))...)

	// A batch with the header of a compressed one-record batch, around
	// these records.
	batch, err := record.Build(record.BatchSpec{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, PartitionLeaderEpoch: -1,
		Codec: codec, BaseTimestamp: time.Now().UnixMilli()}, []record.Record{{KeyLen: -1, ValueLen: -1}}, c)
	if err != nil {
		t.Fatal(err)
	}
	batch = append(batch[:record.HeaderSize:record.HeaderSize], body...)
	binary.BigEndian.PutUint32(batch[8:], uint32(len(batch)-record.LogOverhead)) // batchLength
	record.Batch(batch).SetCRC()
	return batch
}

// resetPeakRSS resets the VmHWM of process pid to its current resident
// set (proc(5): writing 5 to clear_refs), so that VmHWM is the peak from
// now on; it skips the test where that is not allowed.
func resetPeakRSS(t *testing.T, pid int) {
	t.Helper()
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		t.Skipf("*** resetting VmHWM of the broker: %v: SKIPPING ***", err)
	}
}

// TestBadInputRecordOverMessageMaxBytes: with message.max.bytes at 64 KiB,
// a 100 kB record is refused MESSAGE_TOO_LARGE and not stored, as Kafka's
// LogValidator refuses a batch larger than the topic's max.message.bytes
// (which defaults to the broker's message.max.bytes); a 60 kB record goes
// through, and so does the 100 kB record to a topic whose
// max.message.bytes is 200 kB.
func TestBadInputRecordOverMessageMaxBytes(t *testing.T) {
	b := startBadInputBroker(t, "message.max.bytes=65536")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	adm := newAdmin(t, b.addr)
	const roomy = "roomy"
	if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"max.message.bytes": kmsg.StringPtr("200000")}, roomy); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, b.addr, kgo.ProducerBatchCompression(kgo.NoCompression()))
	produce := func(topic string, size int) error {
		return cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: make([]byte, size)}).FirstErr()
	}
	if err := produce(badInputTopic, 100_000); !errors.Is(err, kerr.MessageTooLarge) {
		t.Fatalf("a 100 kB record with message.max.bytes 65536: %v, want MESSAGE_TOO_LARGE", err)
	}
	b.stillServed(t, "a record over message.max.bytes")
	if err := produce(badInputTopic, 60_000); err != nil {
		t.Fatalf("a 60 kB record with message.max.bytes 65536: %v", err)
	}
	b.acked = append(b.acked, string(make([]byte, 60_000)))
	if err := produce(roomy, 100_000); err != nil {
		t.Fatalf("a 100 kB record to a topic with max.message.bytes 200000: %v", err)
	}
	b.checkLog(t)
}

// TestBadInputIdleConnections: 2,000 connections that never send a byte
// are all accepted (the broker's open-file limit allows them; Kafka's
// max.connections default sets no bound), the well-behaved client is
// served while they are open, and the broker closes every one of them
// once connections.max.idle.ms (here 5 s) has passed, not before, as
// Kafka's Selector expires idle channels.
func TestBadInputIdleConnections(t *testing.T) {
	const (
		conns  = 2000
		idleMs = 5000
	)
	raiseOpenFiles(t, conns+1000)
	b := startBadInputBroker(t, fmt.Sprintf("connections.max.idle.ms=%d", idleMs))
	if got := openFileLimit(t, b.p.cmd.Process.Pid); got < conns+1000 {
		t.Fatalf("the broker's open-file limit is %d, too low for %d connections", got, conns)
	}
	first := time.Now()
	held := dialStorm(t, b.addr, conns)
	waitUntil(t, 20*time.Second, "the broker to hold the idle connections", func() (bool, string) {
		open, _ := metricValue(b.n.ports.metrics, "strait_connections")
		return open >= conns, fmt.Sprintf("%v open", open)
	})
	b.stillServed(t, fmt.Sprintf("%d idle connections", conns))

	deadline := first.Add(30 * time.Second)
	var firstClosed time.Time
	for i, c := range held {
		_ = c.SetReadDeadline(deadline)
		n, err := c.Read(make([]byte, 1))
		if n != 0 || errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("idle connection %d: read %d bytes, %v; want it closed by connections.max.idle.ms", i, n, err)
		}
		if i == 0 {
			firstClosed = time.Now()
		}
	}
	t.Logf("%d idle connections closed by the broker %v to %v after the first was opened (connections.max.idle.ms %d)",
		conns, firstClosed.Sub(first).Round(100*time.Millisecond), time.Since(first).Round(100*time.Millisecond), idleMs)
	if early := firstClosed.Sub(first); early < idleMs*time.Millisecond-200*time.Millisecond {
		t.Fatalf("the first idle connection was closed after %v, before connections.max.idle.ms", early)
	}
	waitUntil(t, 20*time.Second, "the broker to count the idle connections closed", func() (bool, string) {
		open, _ := metricValue(b.n.ports.metrics, "strait_connections")
		return open < 10, fmt.Sprintf("%v open", open)
	})
	b.stillServed(t, "the idle connections closed")
	b.checkLog(t)
}

// TestBadInputSlowloris: 100 connections from 127.0.0.2 each dribble a
// Produce request a byte every 200 ms, a request they would take minutes
// to finish. max.connections.per.ip (here 20) holds them to 20 open at
// most, closing the rest as they arrive, as Kafka's ConnectionQuotas
// does; the well-behaved client on 127.0.0.1 is served meanwhile. Once
// they stop sending, the broker closes the held ones after
// connections.max.idle.ms (here 2 s) although each is in the middle of a
// frame, and 127.0.0.2 may connect again.
func TestBadInputSlowloris(t *testing.T) {
	const (
		slow  = 100
		perIP = 20
	)
	b := startBadInputBroker(t, fmt.Sprintf("max.connections.per.ip=%d", perIP), "connections.max.idle.ms=2000")
	frame := kmsg.NewRequestFormatter().AppendRequest(nil, rawconn.Produce(badInputTopic, 9, plainBatch(t, string(make([]byte, 4096)))), 1)
	stop := make(chan struct{})
	var open sync.WaitGroup
	var alive atomic.Int64
	var wg sync.WaitGroup
	for range slow {
		c := dialFrom(t, "127.0.0.2", b.addr)
		alive.Add(1)
		open.Add(1)
		wg.Add(2)
		go func() { // the connection counts as open until the broker closes it
			defer wg.Done()
			defer open.Done()
			defer alive.Add(-1)
			_ = c.SetReadDeadline(time.Now().Add(60 * time.Second))
			_, _ = c.Read(make([]byte, 1))
		}()
		go func() {
			defer wg.Done()
			for i := 0; i < len(frame); i++ {
				select {
				case <-stop:
					return
				case <-time.After(200 * time.Millisecond):
				}
				if _, err := c.Write(frame[i : i+1]); err != nil {
					return
				}
			}
		}()
	}
	t.Cleanup(wg.Wait)
	waitUntil(t, 20*time.Second, "max.connections.per.ip to close the slow connections past it", func() (bool, string) {
		return alive.Load() <= perIP, fmt.Sprintf("%d of %d slow connections open", alive.Load(), slow)
	})
	b.stillServed(t, "slow clients")
	time.Sleep(3 * time.Second) // longer than connections.max.idle.ms, dribbling all along
	if n := alive.Load(); n > perIP {
		t.Fatalf("%d slow connections open from 127.0.0.2, max.connections.per.ip %d", n, perIP)
	}
	rejected, _ := metricValue(b.n.ports.metrics, `strait_connections_rejected_total{listener="PLAINTEXT",reason="per_ip"}`)
	t.Logf("%d of %d slow connections held; %v rejected by max.connections.per.ip", alive.Load(), slow, rejected)
	b.stillServed(t, "slow clients dribbling for 3 s")

	close(stop)
	stopped := time.Now()
	done := make(chan struct{})
	go func() { open.Wait(); close(done) }()
	select {
	case <-done:
		t.Logf("the held slow connections were closed %v after they stopped sending (connections.max.idle.ms 2000)", time.Since(stopped).Round(100*time.Millisecond))
	case <-time.After(20 * time.Second):
		t.Fatalf("%d slow connections, each in the middle of a frame, still open 20 s after they stopped sending", alive.Load())
	}
	if err := apiVersions(dialFrom(t, "127.0.0.2", b.addr)); err != nil {
		t.Fatalf("127.0.0.2 is not served once its slow connections are gone: %v", err)
	}
	b.stillServed(t, "the slow connections closed")
	b.checkLog(t)
}

// raiseOpenFiles raises this process's open-file limit to need where the
// hard limit allows (the broker it starts inherits it), or skips the test
// loudly.
func raiseOpenFiles(t *testing.T, need uint64) {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur >= need {
		return
	}
	if lim.Max < need {
		t.Skipf("*** the open-file limit is %d (hard %d), %d needed: SKIPPING ***", lim.Cur, lim.Max, need)
	}
	orig := lim.Cur
	lim.Cur = need
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skipf("*** raising the open-file limit to %d: %v: SKIPPING ***", need, err)
	}
	t.Cleanup(func() {
		lim.Cur = orig
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	})
}

// openFileLimit is process pid's soft open-file limit (/proc/PID/limits).
func openFileLimit(t *testing.T, pid int) uint64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "Max open files"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				if n, err := strconv.ParseUint(f[0], 10, 64); err == nil {
					return n
				}
			}
		}
	}
	t.Fatalf("no open-file limit in /proc/%d/limits", pid)
	return 0
}
