package broker

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// TestPeerLanesDoNotQueueBehindEachOther: a request held by its broker (an
// AddPartitionsToTxn, as a WriteMirrorStates or WriteTxnMarkers waits for
// a dead replica's acks up to request.timeout.ms) does not hold a request
// of another lane behind it. With one client for every inter-broker RPC
// both shared franz-go's connection, whose answers come in order, and a
// broker's DescribeMirrors fan-out timed out behind a stuck state write.
func TestPeerLanesDoNotQueueBehindEachOther(t *testing.T) {
	t.Parallel()
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	release := make(chan struct{})
	held := make(chan struct{}, 1)
	kc.ControlKey(int16(kmsg.AddPartitionsToTxn), func(kmsg.Request) (kmsg.Response, error, bool) {
		kc.KeepControl()
		select {
		case held <- struct{}{}:
		default:
		}
		kc.SleepControl(func() { <-release })
		return nil, nil, false
	})
	defer close(release)

	p := &peers{nodeID: 1, seed: func() (string, error) { return kc.ListenAddrs()[0], nil },
		opts: func() []kgo.Opt { return nil }, logger: slog.New(slog.DiscardHandler)}
	defer p.close()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	// Learn the broker's id (kfake numbers from 0) through the lane's own
	// metadata, as a node does.
	cl, err := p.client()
	if err != nil {
		t.Fatal(err)
	}
	md, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	if err != nil || len(md.Brokers) != 1 {
		t.Fatalf("metadata: %v %+v", err, md)
	}
	id := md.Brokers[0].NodeID

	go func() {
		req := kmsg.NewPtrAddPartitionsToTxnRequest()
		req.Version = 3
		req.TransactionalID, req.ProducerID, req.ProducerEpoch = "held", 1, 0
		p.request(ctx, id, req) //nolint:errcheck // it is held until the test ends
	}()
	select {
	case <-held:
	case <-ctx.Done():
		t.Fatal("the AddPartitionsToTxn never reached the broker")
	}
	req := kmsg.NewPtrListOffsetsRequest()
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = "t"
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Timestamp = -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	lctx, lcancel := context.WithTimeout(ctx, 5*time.Second)
	defer lcancel()
	if _, err := p.request(lctx, id, req); err != nil {
		t.Fatalf("ListOffsets while an AddPartitionsToTxn is held on the same broker: %v", err)
	}
}

// TestPeerLaneOf: the RPCs that wait for replication (state writes,
// markers) each have their own lane, apart from the queries.
func TestPeerLaneOf(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		req  kmsg.Request
		want peerLane
	}{
		{mirrormsg.NewPtrWriteMirrorStatesRequest(), laneMirrorState},
		{mirrormsg.NewPtrReadMirrorStatesRequest(), laneMirrorState},
		{mirrormsg.NewPtrDescribeMirrorsRequest(), laneMirrorDescribe},
		{mirrormsg.NewPtrSyncMirrorGroupOffsetsRequest(), laneMirrorSync},
		{kmsg.NewPtrWriteTxnMarkersRequest(), laneTxnMarkers},
		{kmsg.NewPtrAddPartitionsToTxnRequest(), laneTxnVerify},
		{kmsg.NewPtrWriteShareGroupStateRequest(), laneShareState},
		{kmsg.NewPtrListOffsetsRequest(), laneDefault},
	} {
		if got := laneOf(c.req); got != c.want {
			t.Errorf("%s travels on lane %s, want %s", kmsg.NameForKey(c.req.Key()), got, c.want)
		}
	}
}
