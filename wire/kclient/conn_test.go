package kclient

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// newCluster is a one-broker kfake cluster with topic t holding n records
// produced with kgo.
func newCluster(t *testing.T, n int) (*kfake.Cluster, string) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic("t"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for range n {
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	return c, c.ListenAddrs()[0]
}

func listEnd(topic string) *kmsg.ListOffsetsRequest {
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version = 100 // above anything: negotiated down
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Timestamp = -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

func fetchFrom(topic string, offset int64, wait time.Duration) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version = 12
	req.ReplicaID = -1
	req.MaxWaitMillis = int32(wait / time.Millisecond)
	req.MinBytes = 1
	req.MaxBytes = 1 << 20
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.FetchOffset, rp.PartitionMaxBytes = offset, 1<<20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// Requests are answered in order on one connection, at the highest
// version both sides serve, and their answers decode: the log end offset
// and the records written.
func TestRequestNegotiatesAndDecodes(t *testing.T) {
	_, addr := newCluster(t, 7)
	c := New(Config{Addr: addr, ClientID: "test"})
	defer c.Close()
	for range 3 {
		req := listEnd("t")
		resp, err := c.Request(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if req.Version >= 100 {
			t.Fatalf("ListOffsets sent at v%d, not negotiated down", req.Version)
		}
		lo := resp.(*kmsg.ListOffsetsResponse)
		if got := lo.Topics[0].Partitions[0].Offset; got != 7 {
			t.Fatalf("log end offset %d, want 7", got)
		}
	}
	resp, err := c.Request(context.Background(), fetchFrom("t", 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	fp := resp.(*kmsg.FetchResponse).Topics[0].Partitions[0]
	if fp.HighWatermark != 7 || len(fp.RecordBatches) == 0 {
		t.Fatalf("fetch: high watermark %d, %d record bytes", fp.HighWatermark, len(fp.RecordBatches))
	}
}

// A request whose key the broker does not serve fails with
// UNSUPPORTED_VERSION without touching the connection.
func TestRequestUnsupportedKey(t *testing.T) {
	_, addr := newCluster(t, 1)
	c := New(Config{Addr: addr})
	defer c.Close()
	req := kmsg.NewPtrEnvelopeRequest() // a controller-only API kfake does not serve
	if _, err := c.Request(context.Background(), req); !errors.Is(err, kerr.UnsupportedVersion) {
		t.Fatalf("err %v, want UNSUPPORTED_VERSION", err)
	}
	if _, err := c.Request(context.Background(), listEnd("t")); err != nil {
		t.Fatalf("the connection after a refused key: %v", err)
	}
}

// A fetch parked in the broker's long poll ends as soon as its context
// does, and the next request dials again and is answered.
func TestRequestCanceledMidWaitThenRedials(t *testing.T) {
	_, addr := newCluster(t, 1)
	c := New(Config{Addr: addr})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	began := time.Now()
	_, err := c.Request(ctx, fetchFrom("t", 1, 20*time.Second))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want the context's", err)
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Fatalf("cancel took %v", d)
	}
	if _, err := c.Request(context.Background(), listEnd("t")); err != nil {
		t.Fatalf("after a canceled request: %v", err)
	}
}

// Close ends a request under way at once, and later requests fail with
// ErrClosed.
func TestCloseInterruptsRequest(t *testing.T) {
	_, addr := newCluster(t, 1)
	c := New(Config{Addr: addr})
	if _, err := c.Request(context.Background(), listEnd("t")); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.Request(context.Background(), fetchFrom("t", 1, 20*time.Second))
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	c.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the interrupted fetch succeeded")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not interrupt the fetch")
	}
	if _, err := c.Request(context.Background(), listEnd("t")); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v, want ErrClosed", err)
	}
}

// A broker that never answers is given up on after Timeout (beyond the
// fetch's own wait), and a frame larger than MaxResponseBytes is refused
// before it is allocated.
func TestSilentAndOversizedBrokers(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer nc.Close()
				buf := make([]byte, 4096)
				if _, err := nc.Read(buf); err != nil {
					return
				}
				if strings.Contains(string(buf), "oversized") {
					_, _ = nc.Write([]byte{0x7f, 0xff, 0xff, 0xff})
				}
				time.Sleep(5 * time.Second)
			}()
		}
	}()
	c := New(Config{Addr: ln.Addr().String(), Timeout: 300 * time.Millisecond})
	defer c.Close()
	began := time.Now()
	if _, err := c.Request(context.Background(), listEnd("t")); err == nil {
		t.Fatal("a silent broker answered")
	}
	if d := time.Since(began); d < 250*time.Millisecond || d > 3*time.Second {
		t.Fatalf("gave up after %v, want about the 300ms timeout", d)
	}
	big := New(Config{Addr: ln.Addr().String(), ClientID: "oversized", MaxResponseBytes: 1 << 20})
	defer big.Close()
	if _, err := big.Request(context.Background(), listEnd("t")); !errors.Is(err, errFrame) {
		t.Fatalf("oversized answer: %v, want a malformed-response error", err)
	}
}

// With ReuseResponseBuffer every answer that fits is read into the
// previous answer's buffer: a second fetch's records overwrite the first's
// in place (the contract callers accept) and still decode right. Without
// it each answer has a buffer of its own, so a kept answer stays intact.
func TestReuseResponseBuffer(t *testing.T) {
	_, addr := newCluster(t, 5)
	for _, reuse := range []bool{true, false} {
		c := New(Config{Addr: addr, ClientID: "test", ReuseResponseBuffer: reuse})
		var first []byte
		for i := range 3 {
			resp, err := c.Request(context.Background(), fetchFrom("t", int64(i), 0))
			if err != nil {
				t.Fatal(err)
			}
			fp := resp.(*kmsg.FetchResponse).Topics[0].Partitions[0]
			if fp.HighWatermark != 5 || len(fp.RecordBatches) == 0 {
				t.Fatalf("reuse=%v fetch %d: high watermark %d, %d record bytes", reuse, i, fp.HighWatermark, len(fp.RecordBatches))
			}
			// The first batch in each answer is the one at offset i.
			if got := int64(binary.BigEndian.Uint64(fp.RecordBatches)); got != int64(i) {
				t.Fatalf("reuse=%v fetch %d: first batch at offset %d", reuse, i, got)
			}
			if i == 0 {
				first = fp.RecordBatches
				continue
			}
			overwritten := int64(binary.BigEndian.Uint64(first)) != 0
			if overwritten != reuse {
				t.Fatalf("reuse=%v fetch %d: first answer's records overwritten = %v", reuse, i, overwritten)
			}
		}
		_ = c.Close()
	}
}
