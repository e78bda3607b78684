package raftmeta

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// directSender hands requests straight to a controller, counting them.
type directSender struct {
	c     *Controller
	sent  atomic.Int32
	inner func(context.Context, kmsg.Request) (kmsg.Response, error)
}

func (d *directSender) Send(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	d.sent.Add(1)
	if d.inner != nil {
		return d.inner(ctx, req)
	}
	return d.c.ServeControllerRequest(ctx, req)
}

// TestBrokerLifecycle registers two brokers against an in-memory
// controller: they start fenced, heartbeat until unfenced, and a controlled
// shutdown moves broker 1's leadership to broker 2 before it is allowed to
// stop.
func TestBrokerLifecycle(t *testing.T) {
	c, log := newTestController(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	send := &directSender{c: c}
	var lcs []*BrokerLifecycle
	for id := int32(1); id <= 2; id++ {
		l := NewBrokerLifecycle(BrokerLifecycleConfig{
			NodeID:                id,
			ClusterID:             "test",
			Endpoints:             []Endpoint{{Listener: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: "h", Port: 9090 + id}},
			Rack:                  "r",
			Channel:               send,
			MetadataOffset:        func() int64 { return int64(log.Image().Offset) },
			HeartbeatInterval:     20 * time.Millisecond,
			FastHeartbeatInterval: 5 * time.Millisecond,
		})
		if l.Epoch() != -1 || !l.Fenced() {
			t.Fatal("state before Start")
		}
		if err := l.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer l.Stop()
		if err := l.WaitUnfenced(ctx); err != nil {
			t.Fatal(err)
		}
		b := log.Image().Brokers[id]
		if b.Epoch != l.Epoch() || b.IncarnationID != l.IncarnationID() || b.Fenced || b.Rack != "r" || b.Endpoints[0].Port != 9090+id {
			t.Fatalf("broker %d: %+v", id, *b)
		}
		lcs = append(lcs, l)
	}
	if err := lcs[0].Start(ctx); err == nil {
		t.Fatal("second Start succeeded")
	}
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "t", -1, -1
	rt.ReplicaAssignment = []kmsg.CreateTopicsRequestTopicReplicaAssignment{{Partition: 0, Replicas: []int32{1, 2}}}
	mustCreate(t, c, rt)

	if err := lcs[0].ControlledShutdown(ctx); err != nil {
		t.Fatal(err)
	}
	p, _ := log.Image().Partition("t", 0)
	if p.Leader != 2 || p.LeaderEpoch != 1 || len(p.ISR) != 1 || p.ISR[0] != 2 {
		t.Fatalf("t-0 after broker 1's controlled shutdown: %+v", *p)
	}
	if b := log.Image().Brokers[1]; !b.Fenced || !b.InControlledShutdown || !lcs[0].Fenced() {
		t.Fatalf("broker 1: %+v", *b)
	}
	// The heartbeats stopped with the permission to shut down.
	n := send.sent.Load()
	time.Sleep(100 * time.Millisecond)
	if got := send.sent.Load(); got-n > 5 {
		t.Fatalf("%d requests after the shutdown was granted (broker 2 alone sends ~5)", got-n)
	}
	lcs[0].Stop()
	lcs[0].Stop()

	// Broker 2, the leader now, shrinks the ISR through the typed channel.
	ap := kmsg.NewPtrAlterPartitionRequest()
	ap.Version = 3
	ap.BrokerID, ap.BrokerEpoch = 2, lcs[1].Epoch()
	at := kmsg.NewAlterPartitionRequestTopic()
	at.TopicID = log.Image().Topics["t"].ID
	rp := kmsg.NewAlterPartitionRequestTopicPartition()
	rp.LeaderEpoch, rp.PartitionEpoch = p.LeaderEpoch, p.PartitionEpoch
	rp.NewEpochISR = []kmsg.AlterPartitionRequestTopicPartitionNewEpochISR{{BrokerID: 2, BrokerEpoch: -1}}
	at.Partitions = append(at.Partitions, rp)
	ap.Topics = append(ap.Topics, at)
	resp, err := ControllerChannel{send}.AlterPartition(ctx, ap)
	if err != nil || resp.ErrorCode != 0 || resp.Topics[0].Partitions[0].ErrorCode != 0 || resp.Topics[0].Partitions[0].PartitionEpoch != p.PartitionEpoch {
		t.Fatalf("alter partition: %v %+v", err, resp)
	}
}

// TestBrokerLifecycleRegistrationErrors: a refusal for good is an error;
// anything else is retried until the context ends.
func TestBrokerLifecycleRegistrationErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _ := newTestController(t, Config{})
	send := &directSender{c: c}
	l := NewBrokerLifecycle(BrokerLifecycleConfig{NodeID: 1, ClusterID: "other", Channel: send})
	if err := l.Start(ctx); !errors.Is(err, kerr.InconsistentClusterID) {
		t.Fatalf("start: %v", err)
	}
	if err := l.ControlledShutdown(ctx); err != nil {
		t.Fatalf("controlled shutdown of an unregistered broker: %v", err)
	}

	send.inner = func(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
		resp := req.ResponseKind().(*kmsg.BrokerRegistrationResponse)
		resp.ErrorCode = kerr.DuplicateBrokerRegistration.Code
		return resp, nil
	}
	short, cancelShort := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancelShort()
	l = NewBrokerLifecycle(BrokerLifecycleConfig{NodeID: 1, Channel: send, FastHeartbeatInterval: 10 * time.Millisecond, HeartbeatInterval: 20 * time.Millisecond})
	before := send.sent.Load()
	if err := l.Start(short); !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, kerr.DuplicateBrokerRegistration) {
		t.Fatalf("start: %v", err)
	}
	if n := send.sent.Load() - before; n < 3 {
		t.Fatalf("%d attempts", n)
	}
	l = NewBrokerLifecycle(BrokerLifecycleConfig{NodeID: 1, Channel: send, Endpoints: []Endpoint{{Listener: "X", SecurityProtocol: "QUIC"}}})
	if err := l.Start(ctx); err == nil {
		t.Fatal("unknown security protocol accepted")
	}
}
