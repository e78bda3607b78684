package raftmeta

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"maps"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/ctrlrpc"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// answerDropper is a controller channel dialer that loses the answer to
// the first request of one api key: it reads the answer off the
// connection (so the controller did carry the request out) and closes
// the connection instead of handing it on, as a cut link would.
type answerDropper struct {
	key int16
	// onDrop runs once the answer is dropped, before the connection
	// closes.
	onDrop func()

	mu      sync.Mutex
	corr    int32 // of the request whose answer is dropped; -1 unknown
	dropped bool
}

func newAnswerDropper(key int16, onDrop func()) *answerDropper {
	return &answerDropper{key: key, onDrop: onDrop, corr: -1}
}

func (d *answerDropper) wasDropped() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dropped
}

func (d *answerDropper) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	server, err := ctrlrpc.DefaultDialer(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	client, proxy := net.Pipe()
	closeBoth := func() { proxy.Close(); server.Close() }
	// Requests: the magic byte, then frames (size, key, version, corr...).
	go func() {
		defer closeBoth()
		r := bufio.NewReader(proxy)
		magic, err := r.ReadByte()
		if err != nil {
			return
		}
		if _, err := server.Write([]byte{magic}); err != nil {
			return
		}
		for {
			frame, err := readTestFrame(r)
			if err != nil {
				return
			}
			d.mu.Lock()
			if !d.dropped && d.corr < 0 && int16(binary.BigEndian.Uint16(frame[4:])) == d.key {
				d.corr = int32(binary.BigEndian.Uint32(frame[8:]))
			}
			d.mu.Unlock()
			if _, err := server.Write(frame); err != nil {
				return
			}
		}
	}()
	// Answers: frames (size, corr...).
	go func() {
		defer closeBoth()
		r := bufio.NewReader(server)
		for {
			frame, err := readTestFrame(r)
			if err != nil {
				return
			}
			d.mu.Lock()
			drop := !d.dropped && d.corr >= 0 && int32(binary.BigEndian.Uint32(frame[4:])) == d.corr
			if drop {
				d.dropped = true
			}
			d.mu.Unlock()
			if drop {
				if d.onDrop != nil {
					d.onDrop()
				}
				return
			}
			if _, err := proxy.Write(frame); err != nil {
				return
			}
		}
	}()
	return client, nil
}

// readTestFrame reads one size-prefixed frame, the size included.
func readTestFrame(r io.Reader) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	frame := make([]byte, 4+binary.BigEndian.Uint32(size[:]))
	copy(frame, size[:])
	_, err := io.ReadFull(r, frame[4:])
	return frame, err
}

// forwardingChannel is a controller channel of node 1 of tc whose
// connections go through dial.
func (tc *testCluster) forwardingChannel(dial ctrlrpc.Dialer) *ctrlrpc.Client {
	var bootstrap []string
	for _, id := range slices.Sorted(maps.Keys(tc.voters)) {
		bootstrap = append(bootstrap, tc.voters[id])
	}
	q := tc.nodes[1]
	ch := ctrlrpc.NewClient(ctrlrpc.ClientConfig{
		ClientID: ctrlrpc.NodeClientID(1), Resolve: q.ControllerAddr, Bootstrap: bootstrap, Dialer: dial,
		AttemptTimeout: 5 * time.Second,
	})
	tc.t.Cleanup(ch.Close)
	return ch
}

// TestForwardedWriteCarriedOutOnce loses the answer to a forwarded
// DeleteMirror after it committed; the channel's retry, with the same
// ForwardID, gets the first answer (success), not UNKNOWN_CLUSTER_MIRROR,
// from the same controller and from one elected in between.
func TestForwardedWriteCarriedOutOnce(t *testing.T) {
	for _, failover := range []bool{false, true} {
		name := "same controller"
		if failover {
			name = "after failover"
		}
		t.Run(name, func(t *testing.T) {
			tc := newTestCluster(t, 3, nil)
			for id := int32(1); id <= 3; id++ {
				tc.start(id)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			tc.unfence(ctx, 1, 2, 3)
			first := tc.leader(10 * time.Second)
			if cr := tc.send(1, createMirrorReq("east", "bootstrap.servers", "src:9092")).(*mirrormsg.CreateMirrorResponse); cr.ErrorCode != 0 {
				t.Fatalf("create: %s %s", mirrorCode(cr.ErrorCode), deref(cr.ErrorMessage))
			}

			var onDrop func()
			if failover {
				onDrop = func() {
					if err := tc.nodes[first].TransferLeadership(ctx); err != nil {
						t.Errorf("transfer leadership: %v", err)
					}
				}
			}
			drop := newAnswerDropper(mirrormsg.NewPtrDeleteMirrorRequest().Key(), onDrop)
			ch := tc.forwardingChannel(drop.dial)
			fctx := ctrlrpc.WithForwardID(ctx, ctrlrpc.ForwardID{Node: 1, Session: 0xfeed, Seq: 1})
			del := mirrormsg.NewPtrDeleteMirrorRequest()
			del.MirrorName = "east"
			resp, err := ch.Send(fctx, del)
			if err != nil {
				t.Fatal(err)
			}
			if !drop.wasDropped() {
				t.Fatal("the first answer was not dropped")
			}
			if dr := resp.(*mirrormsg.DeleteMirrorResponse); dr.ErrorCode != 0 {
				t.Fatalf("delete retried after its answer was lost: %s %s", mirrorCode(dr.ErrorCode), deref(dr.ErrorMessage))
			}
			if failover {
				if now := tc.leader(10 * time.Second); now == first {
					t.Fatalf("node %d still leads", now)
				}
			}
			if _, ok := tc.nodes[1].Image().Mirrors["east"]; ok {
				t.Fatal("the mirror is still there")
			}
			// A new request (a new id) is carried out again.
			resp, err = ch.Send(ctrlrpc.WithForwardID(ctx, ctrlrpc.ForwardID{Node: 1, Session: 0xfeed, Seq: 2}), del)
			if err != nil {
				t.Fatal(err)
			}
			if dr := resp.(*mirrormsg.DeleteMirrorResponse); dr.ErrorCode != mirrormsg.UnknownClusterMirror.Code {
				t.Fatalf("a second delete: %s, want UNKNOWN_CLUSTER_MIRROR", mirrorCode(dr.ErrorCode))
			}
		})
	}
}

// TestForwardedCreateTopicsRetriedOnce: CreateTopics' answer, with its
// topic id, comes back from the image; a retry is not
// TOPIC_ALREADY_EXISTS.
func TestForwardedCreateTopicsRetriedOnce(t *testing.T) {
	c, _ := newTestController(t, Config{}, 1, 2, 3)
	ctx := ctrlrpc.WithForwardID(context.Background(), ctrlrpc.ForwardID{Node: 2, Session: 1, Seq: 9})
	req := createReq(7, newTopic("orders", 3, 2))
	first, err := c.ServeControllerRequest(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.ServeControllerRequest(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	a, b := first.(*kmsg.CreateTopicsResponse).Topics[0], again.(*kmsg.CreateTopicsResponse).Topics[0]
	if a.ErrorCode != 0 || b.ErrorCode != 0 || a.TopicID != b.TopicID || a.TopicID != c.log.Image().Topics["orders"].ID {
		t.Fatalf("first %s %x, retry %s %x", kerr.ErrorForCode(a.ErrorCode), a.TopicID, kerr.ErrorForCode(b.ErrorCode), b.TopicID)
	}
	// Without the id it is a new request.
	plain, _ := c.ServeControllerRequest(context.Background(), req)
	if code := plain.(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode; code != kerr.TopicAlreadyExists.Code {
		t.Fatalf("a new request: %s", kerr.ErrorForCode(code))
	}
}

// TestForwardedAnswersWindow: the image keeps the newest answers per
// broker, through a snapshot, and refuses a batch repeating an id.
func TestForwardedAnswersWindow(t *testing.T) {
	fsm := NewFSM("c", nil)
	index := uint64(0)
	apply := func(records ...Record) error {
		index++
		// Through the codec, as raft hands batches over.
		if err, _ := fsm.Apply(&raft.Log{Type: raft.LogCommand, Index: index, Data: EncodeBatch(records)}).(error); err != nil {
			return err
		}
		return nil
	}
	id := func(seq uint64) ctrlrpc.ForwardID { return ctrlrpc.ForwardID{Node: 4, Session: 3, Seq: seq} }
	for seq := uint64(1); seq <= maxForwardedAnswersPerNode+5; seq++ {
		if err := apply(&ForwardedRequestRecord{ID: id(seq), APIKey: 19, APIVersion: 7, Response: []byte{byte(seq)}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := apply(&ConfigRecord{ResourceType: ConfigResourceTopic, ResourceName: "x", Name: "k", Value: strp("v")}, &ForwardedRequestRecord{ID: id(maxForwardedAnswersPerNode + 5)}); err == nil {
		t.Fatal("a batch repeating a forwarded request id was applied")
	}
	img := fsm.Image()
	if img.TopicConfig("x") != nil {
		t.Fatal("the refused batch's config was applied")
	}
	if _, ok := img.ForwardedAnswer(id(5)); ok {
		t.Fatal("answer 5 is past the window and still kept")
	}
	if n := len(img.Forwarded[4]); n != maxForwardedAnswersPerNode {
		t.Fatalf("window holds %d answers", n)
	}
	var buf bytes.Buffer
	if err := writeSnapshot(&buf, img); err != nil {
		t.Fatal(err)
	}
	restored, err := readSnapshot(&buf)
	if err != nil {
		t.Fatal(err)
	}
	a, ok := restored.ForwardedAnswer(id(maxForwardedAnswersPerNode + 5))
	if !ok || a.APIKey != 19 || a.APIVersion != 7 || len(a.Response) != 1 || a.Response[0] != byte(maxForwardedAnswersPerNode+5) {
		t.Fatalf("restored answer: %+v %v", a, ok)
	}
}
