package mirrormsg_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// TestKgoClient sends mirror requests with a kgo.Client (configured with
// MaxVersions, which kgo needs for keys it does not know) to a
// minimal broker (ApiVersions, Metadata and the mirror keys) that decodes
// them with RequestForKey: the admin request is routed to the controller
// the Metadata response names, the other to any broker, and the responses,
// flexible header included, decode in kgo.
func TestKgoClient(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := newFakeBroker(t, ln)
	defer b.close()

	cl, err := kgo.NewClient(
		kgo.SeedBrokers(ln.Addr().String()),
		kgo.MaxVersions(mirrormsg.MaxVersions(nil)),
		kgo.RetryTimeout(5*time.Second),
	)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	create := mirrormsg.NewPtrCreateMirrorRequest()
	create.MirrorName = "m1"
	create.Config = []mirrormsg.CreateMirrorRequestMirrorConfig{{Name: "bootstrap.servers", Value: kmsg.StringPtr("src:9092")}}
	sent := *create
	cresp, err := create.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("CreateMirror: %v", err)
	}
	if cresp.ErrorCode != mirrormsg.ClusterMirrorAlreadyExists.Code || cresp.ErrorMessage == nil || *cresp.ErrorMessage != "m1 exists" {
		t.Fatalf("CreateMirror response %+v", cresp)
	}
	if err := mirrormsg.ErrorForCode(cresp.ErrorCode); !errors.Is(err, mirrormsg.ClusterMirrorAlreadyExists) {
		t.Fatalf("ErrorForCode(%d) = %v", cresp.ErrorCode, err)
	}
	if got := b.received(t); !reflect.DeepEqual(got, &sent) {
		t.Fatalf("broker received %+v, client sent %+v", got, &sent)
	}

	desc := mirrormsg.NewPtrDescribeMirrorsRequest()
	desc.MirrorNames = []string{"m1"}
	dresp, err := desc.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("DescribeMirrors: %v", err)
	}
	if len(dresp.Mirrors) != 1 || len(dresp.Mirrors[0].Topics) != 1 {
		t.Fatalf("DescribeMirrors response %+v", dresp)
	}
	p := dresp.Mirrors[0].Topics[0].Partitions[0]
	if p.State != "MIRRORING" || p.Lag != 10 || p.OffsetsSkipped != 5 || p.ErrorMessage == nil || *p.ErrorMessage != "boom" {
		t.Fatalf("DescribeMirrors partition %+v", p)
	}
	if got := b.received(t).(*mirrormsg.DescribeMirrorsRequest); !reflect.DeepEqual(got.MirrorNames, []string{"m1"}) {
		t.Fatalf("broker received %+v", got)
	}
	if n := b.metadataRequests(); n == 0 {
		t.Fatal("kgo sent the admin request without asking Metadata for the controller")
	}
}

// fakeBroker answers one node's worth of Kafka protocol: node 1, also the
// controller.
type fakeBroker struct {
	t    *testing.T
	ln   net.Listener
	host string
	port int32
	reqs chan kmsg.Request
	wg   sync.WaitGroup

	mu       sync.Mutex
	conns    []net.Conn
	metadata int
}

func newFakeBroker(t *testing.T, ln net.Listener) *fakeBroker {
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	p, _ := strconv.Atoi(port)
	b := &fakeBroker{t: t, ln: ln, host: host, port: int32(p), reqs: make(chan kmsg.Request, 16)}
	b.wg.Add(1)
	go b.accept()
	return b
}

func (b *fakeBroker) close() {
	b.ln.Close()
	b.mu.Lock()
	for _, c := range b.conns {
		c.Close()
	}
	b.mu.Unlock()
	b.wg.Wait()
}

func (b *fakeBroker) received(t *testing.T) kmsg.Request {
	t.Helper()
	select {
	case r := <-b.reqs:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("the broker received no mirror request")
		return nil
	}
}

func (b *fakeBroker) metadataRequests() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.metadata
}

func (b *fakeBroker) accept() {
	defer b.wg.Done()
	for {
		c, err := b.ln.Accept()
		if err != nil {
			return
		}
		b.mu.Lock()
		b.conns = append(b.conns, c)
		b.mu.Unlock()
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			defer c.Close()
			if err := b.serve(c); err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				b.t.Errorf("fake broker: %v", err)
			}
		}()
	}
}

func (b *fakeBroker) serve(c net.Conn) error {
	r := bufio.NewReader(c)
	for {
		var size [4]byte
		if _, err := io.ReadFull(r, size[:]); err != nil {
			return err
		}
		frame := make([]byte, binary.BigEndian.Uint32(size[:]))
		if _, err := io.ReadFull(r, frame); err != nil {
			return err
		}
		rd := kbin.Reader{Src: frame}
		key, version, corr := rd.Int16(), rd.Int16(), rd.Int32()
		rd.NullableString() // client id
		// Mirror keys first, as the wire server looks them up.
		req := mirrormsg.RequestForKey(key)
		if req == nil {
			req = kmsg.RequestForKey(key)
		}
		if req == nil {
			return fmt.Errorf("unknown key %d", key)
		}
		req.SetVersion(version)
		if req.IsFlexible() {
			kmsg.SkipTags(&rd)
		}
		if err := req.ReadFrom(rd.Src); err != nil {
			return fmt.Errorf("key %d v%d: %w", key, version, err)
		}
		resp, err := b.handle(req)
		if err != nil {
			return err
		}
		out := kbin.AppendInt32(make([]byte, 4), corr)
		if req.IsFlexible() && key != int16(kmsg.ApiVersions) { // ApiVersions answers with header v0
			out = append(out, 0)
		}
		out = resp.AppendTo(out)
		binary.BigEndian.PutUint32(out, uint32(len(out)-4))
		if _, err := c.Write(out); err != nil {
			return err
		}
	}
}

func (b *fakeBroker) handle(req kmsg.Request) (kmsg.Response, error) {
	switch req := req.(type) {
	case *kmsg.ApiVersionsRequest:
		resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
		add := func(key, maxV int16) {
			k := kmsg.NewApiVersionsResponseApiKey()
			k.ApiKey, k.MinVersion, k.MaxVersion = key, 0, maxV
			resp.ApiKeys = append(resp.ApiKeys, k)
		}
		add(int16(kmsg.Metadata), kmsg.NewPtrMetadataRequest().MaxVersion())
		add(int16(kmsg.ApiVersions), kmsg.NewPtrApiVersionsRequest().MaxVersion())
		for _, a := range mirrormsg.APIs {
			add(a.Key, a.Max)
		}
		return resp, nil
	case *kmsg.MetadataRequest:
		b.mu.Lock()
		b.metadata++
		b.mu.Unlock()
		resp := req.ResponseKind().(*kmsg.MetadataResponse)
		br := kmsg.NewMetadataResponseBroker()
		br.NodeID, br.Host, br.Port = 1, b.host, b.port
		resp.Brokers = append(resp.Brokers, br)
		resp.ControllerID = 1
		return resp, nil
	case *mirrormsg.CreateMirrorRequest:
		b.reqs <- req
		resp := req.ResponseKind().(*mirrormsg.CreateMirrorResponse)
		resp.ErrorCode = mirrormsg.ClusterMirrorAlreadyExists.Code
		resp.ErrorMessage = kmsg.StringPtr(req.MirrorName + " exists")
		return resp, nil
	case *mirrormsg.DescribeMirrorsRequest:
		b.reqs <- req
		resp := req.ResponseKind().(*mirrormsg.DescribeMirrorsResponse)
		m := mirrormsg.NewDescribeMirrorsResponseDescribedMirror()
		m.MirrorName = req.MirrorNames[0]
		tp := mirrormsg.NewDescribeMirrorsResponseTopicPartitions()
		tp.TopicName = "t"
		p := mirrormsg.NewDescribeMirrorsResponsePartitionDetail()
		p.State, p.SourceOffset, p.DestinationOffset, p.Lag = "MIRRORING", 100, 90, 10
		p.ErrorMessage, p.OffsetsSkipped = kmsg.StringPtr("boom"), 5
		tp.Partitions = append(tp.Partitions, p)
		m.Topics = append(m.Topics, tp)
		resp.Mirrors = append(resp.Mirrors, m)
		return resp, nil
	}
	return nil, fmt.Errorf("unexpected request %T", req)
}
