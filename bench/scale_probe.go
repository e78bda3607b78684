package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// FDs counts the open file descriptors of process pid
// (/proc/<pid>/fd).
func (r *ProcReader) FDs(pid int) (int, error) {
	ents, err := os.ReadDir(filepath.Join(r.Root, strconv.Itoa(pid), "fd"))
	if err != nil {
		return 0, fmt.Errorf("bench: read proc fds: %w", err)
	}
	return len(ents), nil
}

// metadataLatency sends MetadataRequests Metadata requests for every topic,
// then as many for topic one, one at a time from a kgo client to the
// broker directly, timing each from the call to the decoded response.
func (c *ScaleConfig) metadataLatency(ctx context.Context, b *Broker, one string) (all, single *Latency, err error) {
	cl, err := kgo.NewClient(seedOpts(b.Addrs, b.TLS)...)
	if err != nil {
		return nil, nil, fmt.Errorf("bench: metadata client: %w", err)
	}
	defer cl.Close()
	first, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	if err != nil {
		return nil, nil, fmt.Errorf("bench: metadata: %w", err)
	}
	if len(first.Brokers) == 0 {
		return nil, nil, errors.New("bench: metadata names no broker")
	}
	br := cl.Broker(int(first.Brokers[0].NodeID))
	run := func(topics []kmsg.MetadataRequestTopic) (*Latency, error) {
		h := NewHistogram()
		for range c.MetadataRequests {
			req := kmsg.NewPtrMetadataRequest()
			req.Topics = topics
			start := time.Now()
			resp, err := br.Request(ctx, req)
			if err != nil {
				return nil, fmt.Errorf("bench: metadata: %w", err)
			}
			h.RecordDuration(time.Since(start))
			for _, t := range resp.(*kmsg.MetadataResponse).Topics {
				if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
					return nil, fmt.Errorf("bench: metadata of %v: %w", t.Topic, err)
				}
			}
		}
		return summarize(h), nil
	}
	if all, err = run(nil); err != nil {
		return nil, nil, err
	}
	t := kmsg.NewMetadataRequestTopic()
	t.Topic = &one
	single, err = run([]kmsg.MetadataRequestTopic{t})
	return all, single, err
}

// scaleDialers bounds how many connections are opened at once.
const scaleDialers = 32

// connections opens Connections connections, each sending ApiVersions
// and Metadata for one topic as a client does when it starts, reads the
// broker's RSS and open files with all of them idle, then closes them.
func (c *ScaleConfig) connections(ctx context.Context, b *Broker, topics []string) (rss int64, fds int, err error) {
	if c.Connections == 0 {
		return 0, 0, nil
	}
	conns := make([]net.Conn, c.Connections)
	defer func() {
		for _, cn := range conns {
			if cn != nil {
				cn.Close()
			}
		}
	}()
	errs := make(chan error, c.Connections)
	sem := make(chan struct{}, scaleDialers)
	var wg sync.WaitGroup
	for i := range conns {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			cn, err := dialHello(ctx, b.Addrs[0], topics[i%len(topics)])
			conns[i] = cn
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return 0, 0, err
	}
	time.Sleep(c.Settle)
	return c.idle(b.PID)
}

// dialHello connects to addr and sends what a client sends first:
// ApiVersions (v3), then Metadata (v12) for topic. The connection stays
// open.
func dialHello(ctx context.Context, addr, topic string) (net.Conn, error) {
	var d net.Dialer
	cn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("bench: connect %s: %w", addr, err)
	}
	if _, err := helloMetadata(cn, topic); err != nil {
		return cn, err
	}
	return cn, nil
}

// helloMetadata sends ApiVersions and Metadata for topic on cn and returns
// the Metadata response.
func helloMetadata(cn net.Conn, topic string) (*kmsg.MetadataResponse, error) {
	_ = cn.SetDeadline(time.Now().Add(30 * time.Second))
	defer cn.SetDeadline(time.Time{})
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID("strait-bench-scale"))
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version = 3
	av.ClientSoftwareName, av.ClientSoftwareVersion = "strait-bench", "1"
	avResp := kmsg.NewPtrApiVersionsResponse()
	avResp.Version = 3
	if err := roundTrip(cn, f, av, avResp, 1); err != nil {
		return nil, err
	}
	if err := kerr.ErrorForCode(avResp.ErrorCode); err != nil {
		return nil, fmt.Errorf("bench: ApiVersions: %w", err)
	}
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 12
	t := kmsg.NewMetadataRequestTopic()
	t.Topic = &topic
	md.Topics = []kmsg.MetadataRequestTopic{t}
	mdResp := kmsg.NewPtrMetadataResponse()
	mdResp.Version = 12
	if err := roundTrip(cn, f, md, mdResp, 2); err != nil {
		return nil, err
	}
	return mdResp, nil
}

// roundTrip writes req and reads its response into resp (whose version
// is set). ApiVersions answers with the v0 response header whatever its
// version (KIP-511); other flexible responses end the header with tags.
func roundTrip(cn net.Conn, f *kmsg.RequestFormatter, req kmsg.Request, resp kmsg.Response, corr int32) error {
	if _, err := cn.Write(f.AppendRequest(nil, req, corr)); err != nil {
		return fmt.Errorf("bench: send %s: %w", kmsg.NameForKey(req.Key()), err)
	}
	var size [4]byte
	if _, err := io.ReadFull(cn, size[:]); err != nil {
		return fmt.Errorf("bench: read %s response: %w", kmsg.NameForKey(req.Key()), err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(cn, body); err != nil {
		return fmt.Errorf("bench: read %s response: %w", kmsg.NameForKey(req.Key()), err)
	}
	r := kbin.Reader{Src: body}
	if got := r.Int32(); got != corr {
		return fmt.Errorf("bench: %s response has correlation id %d, want %d", kmsg.NameForKey(req.Key()), got, corr)
	}
	if resp.IsFlexible() && req.Key() != kmsg.ApiVersions.Int16() {
		kmsg.SkipTags(&r)
	}
	if err := resp.ReadFrom(r.Src); err != nil {
		return fmt.Errorf("bench: decode %s response: %w", kmsg.NameForKey(req.Key()), err)
	}
	return nil
}

// waitLed polls n until it answers Metadata for topic with every
// partition led: the broker serves the topic again after a restart.
func waitLed(ctx context.Context, n *serveNode, topic string) error {
	for {
		select {
		case <-n.done:
			return fmt.Errorf("bench: node %d exited during its restart (%v); its log ends:\n%s", n.spec.id, n.err, logTail(n.spec.logFile, 20))
		default:
		}
		if ledOnce(ctx, n.addr(), topic) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("bench: node %d did not serve %s after its restart: %w; its log ends:\n%s", n.spec.id, topic, ctx.Err(), logTail(n.spec.logFile, 20))
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func ledOnce(ctx context.Context, addr, topic string) bool {
	var d net.Dialer
	dctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	cn, err := d.DialContext(dctx, "tcp", addr)
	if err != nil {
		return false
	}
	defer cn.Close()
	md, err := helloMetadata(cn, topic)
	if err != nil || len(md.Topics) != 1 || md.Topics[0].ErrorCode != 0 || len(md.Topics[0].Partitions) == 0 {
		return false
	}
	for _, p := range md.Topics[0].Partitions {
		if p.ErrorCode != 0 || p.Leader < 0 {
			return false
		}
	}
	return true
}
