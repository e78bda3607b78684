package broker_test

import (
	"bufio"
	"fmt"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/raftmeta/kframe"
	"github.com/strait-io/strait/replication/share"
	"github.com/strait-io/strait/replication/share/sharetest"
	"github.com/strait-io/strait/storage/record"
)

// shareConn is a raw connection for ShareFetch and ShareAcknowledge. The
// broker serves them but does not list them in ApiVersions yet, so kgo
// (and kclient, which negotiates too) will not send them.
type shareConn struct {
	t    testing.TB
	nc   net.Conn
	r    *bufio.Reader
	corr int32
	fmtr *kmsg.RequestFormatter
}

func dialShare(t testing.TB, addr string) *shareConn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { nc.Close() })
	return &shareConn{t: t, nc: nc, r: bufio.NewReader(nc), fmtr: kmsg.NewRequestFormatter(kmsg.FormatterClientID("share-test"))}
}

// do sends req and returns its answer; the answer may take up to wait
// beyond a generous bound.
func (c *shareConn) do(req kmsg.Request, wait time.Duration) kmsg.Response {
	c.t.Helper()
	c.corr++
	if err := c.nc.SetDeadline(time.Now().Add(20*time.Second + wait)); err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.nc.Write(c.fmtr.AppendRequest(nil, req, c.corr)); err != nil {
		c.t.Fatalf("%s: write: %v", kmsg.NameForKey(req.Key()), err)
	}
	frame, err := kframe.ReadFrame(c.r, 64<<20)
	if err != nil {
		c.t.Fatalf("%s: read: %v", kmsg.NameForKey(req.Key()), err)
	}
	resp, err := kframe.DecodeResponse(req, frame[4:])
	if err != nil {
		c.t.Fatalf("%s: decode: %v", kmsg.NameForKey(req.Key()), err)
	}
	return resp
}

// shareMember is one share consumer of one partition, on its own
// connection, keeping its share session epoch.
type shareMember struct {
	c         *shareConn
	group, id string
	topicID   [16]byte
	partition int32
	epoch     int32
}

func newShareMember(t testing.TB, addr, group, id string, topicID [16]byte) *shareMember {
	return &shareMember{c: dialShare(t, addr), group: group, id: id, topicID: topicID}
}

// sharePart is what a ShareFetch answered for the member's partition:
// the acquired ranges and the values of the acquired records.
type sharePart struct {
	errCode, ackErrCode int16
	acquired            []share.AcquiredRange
	values              map[int64]string
	leader              kmsg.ShareFetchResponseTopicPartitionCurrentLeader
	endpoints           []kmsg.ShareFetchResponseNodeEndpoint
}

// fetch sends a ShareFetch (v2) for the member's partition, carrying acks
// ("first last type" triples), waiting up to maxWait for records.
func (m *shareMember) fetch(maxWait time.Duration, acks ...[3]int64) sharePart {
	m.c.t.Helper()
	req := kmsg.NewPtrShareFetchRequest()
	req.Version = 2
	req.GroupID, req.MemberID, req.ShareSessionEpoch = kmsg.StringPtr(m.group), kmsg.StringPtr(m.id), m.epoch
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes, req.MaxRecords = int32(maxWait.Milliseconds()), 1, 1<<20, 500
	rt := kmsg.NewShareFetchRequestTopic()
	rt.TopicID = m.topicID
	rp := kmsg.NewShareFetchRequestTopicPartition()
	rp.Partition = m.partition
	for _, a := range acks {
		b := kmsg.NewShareFetchRequestTopicPartitionAcknowledgementBatch()
		b.FirstOffset, b.LastOffset, b.AcknowledgeTypes = a[0], a[1], []int8{int8(a[2])}
		rp.AcknowledgementBatches = append(rp.AcknowledgementBatches, b)
	}
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := m.c.do(req, maxWait).(*kmsg.ShareFetchResponse)
	if resp.ErrorCode != 0 {
		m.c.t.Fatalf("ShareFetch of %s: %v", m.id, kerr.ErrorForCode(resp.ErrorCode))
	}
	m.epoch++
	out := sharePart{values: map[int64]string{}, endpoints: resp.NodeEndpoints}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if t.TopicID != m.topicID || p.Partition != m.partition {
				continue
			}
			out.errCode, out.ackErrCode, out.leader = p.ErrorCode, p.AcknowledgeErrorCode, p.CurrentLeader
			for _, a := range p.AcquiredRecords {
				out.acquired = append(out.acquired, share.AcquiredRange{First: a.FirstOffset, Last: a.LastOffset, DeliveryCount: a.DeliveryCount})
			}
			out.values = recordValues(m.c.t, p.Records)
		}
	}
	for _, a := range out.acquired {
		for off := a.First; off <= a.Last; off++ {
			if _, ok := out.values[off]; !ok {
				m.c.t.Fatalf("%s acquired offset %d without its record (acquired %v)", m.id, off, out.acquired)
			}
		}
	}
	return out
}

// ack sends a ShareAcknowledge (v2) and returns the partition's error.
func (m *shareMember) ack(acks ...[3]int64) int16 {
	m.c.t.Helper()
	req := kmsg.NewPtrShareAcknowledgeRequest()
	req.Version = 2
	req.GroupID, req.MemberID, req.ShareSessionEpoch = kmsg.StringPtr(m.group), kmsg.StringPtr(m.id), m.epoch
	rt := kmsg.NewShareAcknowledgeRequestTopic()
	rt.TopicID = m.topicID
	rp := kmsg.NewShareAcknowledgeRequestTopicPartition()
	rp.Partition = m.partition
	for _, a := range acks {
		b := kmsg.NewShareAcknowledgeRequestTopicPartitionAcknowledgementBatch()
		b.FirstOffset, b.LastOffset, b.AcknowledgeTypes = a[0], a[1], []int8{int8(a[2])}
		rp.AcknowledgementBatches = append(rp.AcknowledgementBatches, b)
	}
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := m.c.do(req, 0).(*kmsg.ShareAcknowledgeResponse)
	if resp.ErrorCode != 0 {
		m.c.t.Fatalf("ShareAcknowledge of %s: %v", m.id, kerr.ErrorForCode(resp.ErrorCode))
	}
	m.epoch++
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		m.c.t.Fatalf("ShareAcknowledge answered %+v", resp.Topics)
	}
	return resp.Topics[0].Partitions[0].ErrorCode
}

// recordValues decodes the values of the (uncompressed) data records of
// a ShareFetch's record batches, by offset.
func recordValues(t testing.TB, data []byte) map[int64]string {
	t.Helper()
	out := map[int64]string{}
	it := record.NewIter(data)
	for b, ok := it.Next(); ok; b, ok = it.Next() {
		if b.IsControl() {
			continue
		}
		err := record.ParseRawRecords(b.Records(), b.RecordCount(), func(r record.RawRecord) error {
			var kr kmsg.Record
			if err := kr.ReadFrom(r.Raw); err != nil {
				return err
			}
			out[b.BaseOffset()+int64(r.OffsetDelta)] = string(kr.Value)
			return nil
		})
		if err != nil {
			t.Fatalf("records: %v", err)
		}
	}
	if err := it.Err(); err != nil {
		t.Fatalf("record batches: %v", err)
	}
	return out
}

func produceValues(t testing.TB, cl *kgo.Client, topic string, from, n int) {
	t.Helper()
	var rs []*kgo.Record
	for i := from; i < from+n; i++ {
		rs = append(rs, &kgo.Record{Topic: topic, Value: []byte(fmt.Sprintf("m%d", i))})
	}
	produceSync(t, cl, rs...)
}

// shareTopicID is topic's id, as share requests name topics.
func shareTopicID(t testing.TB, adm *kadm.Client, topic string) [16]byte {
	t.Helper()
	td, err := adm.ListTopics(testCtx(t, 10*time.Second), topic)
	if err != nil || td[topic].Err != nil {
		t.Fatalf("list %s: %v %v", topic, err, td[topic].Err)
	}
	return td[topic].ID
}

func wantAcquired(t testing.TB, who string, got sharePart, want ...share.AcquiredRange) {
	t.Helper()
	if got.errCode != 0 {
		t.Fatalf("%s: partition error %v", who, kerr.ErrorForCode(got.errCode))
	}
	if !slices.Equal(got.acquired, want) {
		t.Fatalf("%s acquired %v, want %v", who, got.acquired, want)
	}
	for _, a := range want {
		for off := a.First; off <= a.Last; off++ {
			if v := got.values[off]; v != fmt.Sprintf("m%d", off) {
				t.Fatalf("%s: offset %d holds %q", who, off, v)
			}
		}
	}
}

// A share group over a real broker: the first fetch pins the group's
// start at the log end (share.auto.offset.reset=latest, Kafka's default),
// a parked ShareFetch wakes for records produced after it, members never
// share a record, a release goes to the next member on a second
// delivery, and the state the persister holds survives a restart of the
// broker: the accepted records are never delivered again, the released
// ones come back.
func TestShareGroupOverBroker(t *testing.T) {
	p := sharetest.NewPersister()
	b := brokertest.Start(t, brokertest.WithSharePersister(p))
	adm := b.Admin(t)
	createTopic(t, adm, "shares", 1)
	id := shareTopicID(t, adm, "shares")
	key := share.PartitionKey{GroupID: "g", TopicID: id, Partition: 0}

	cl := b.Client(t, kgo.ProducerBatchCompression(kgo.NoCompression()))
	produceValues(t, cl, "shares", 0, 3) // before the group: skipped

	a := newShareMember(t, b.Addr(), "g", "member-a", id)
	wantAcquired(t, "a's first fetch", a.fetch(0))
	if st, _ := p.State(key); st.StartOffset != 3 {
		t.Fatalf("the group's start was stored at %d, want 3 (the log end when it first fetched)", st.StartOffset)
	}

	// A parked fetch wakes for new records, long before its MaxWaitMs.
	parked := make(chan sharePart, 1)
	go func() { parked <- a.fetch(time.Minute) }()
	time.Sleep(100 * time.Millisecond) // let it park; either order must work
	produceValues(t, cl, "shares", 3, 5)
	select {
	case got := <-parked:
		wantAcquired(t, "a's parked fetch", got, share.AcquiredRange{First: 3, Last: 7, DeliveryCount: 1})
	case <-time.After(30 * time.Second):
		t.Fatal("the parked ShareFetch was not woken by the produce")
	}

	m := newShareMember(t, b.Addr(), "g", "member-b", id)
	wantAcquired(t, "b while a holds everything", m.fetch(0))
	if code := a.ack([3]int64{3, 5, int64(share.AckAccept)}, [3]int64{6, 7, int64(share.AckRelease)}); code != 0 {
		t.Fatalf("a's acknowledgement: %v", kerr.ErrorForCode(code))
	}
	if st, _ := p.State(key); st.StartOffset != 6 {
		t.Fatalf("stored start %d after accepting 3-5, want 6", st.StartOffset)
	}
	wantAcquired(t, "b after a's release", m.fetch(0), share.AcquiredRange{First: 6, Last: 7, DeliveryCount: 2})

	// Piggybacked: b rejects 6 and accepts 7 on its next fetch, which
	// takes the new record 8.
	produceValues(t, cl, "shares", 8, 1)
	got := m.fetch(0, [3]int64{6, 6, int64(share.AckReject)}, [3]int64{7, 7, int64(share.AckAccept)})
	if got.ackErrCode != 0 {
		t.Fatalf("b's piggybacked acknowledgement: %v", kerr.ErrorForCode(got.ackErrCode))
	}
	wantAcquired(t, "b's fetch with acknowledgements", got, share.AcquiredRange{First: 8, Last: 8, DeliveryCount: 1})

	// b holds 8 when the broker restarts: it comes back; nothing done
	// with is delivered again. Its acquisition was never written (an
	// acquisition alone is not, as in Kafka), so it counts as never
	// delivered.
	b.Restart(t)
	c := newShareMember(t, b.Addr(), "g", "member-c", id)
	wantAcquired(t, "c after the restart", c.fetch(0), share.AcquiredRange{First: 8, Last: 8, DeliveryCount: 1})

	// A topic id the broker does not know.
	u := newShareMember(t, b.Addr(), "g", "member-u", [16]byte{0xde, 0xad})
	if got := u.fetch(0); got.errCode != kerr.UnknownTopicID.Code {
		t.Fatalf("unknown topic id: %v", kerr.ErrorForCode(got.errCode))
	}
}

// A share partition moves with its partition's leadership: a follower
// answers NOT_LEADER_OR_FOLLOWER with the leader and its endpoint; when
// the leader stops, the new leader loads the state the old one stored
// (one persister plays the cluster's share coordinator) and goes on
// from it: accepted records are not delivered again, records the old
// leader handed out and never saw acknowledged are, counting that
// delivery.
func TestShareGroupLeaderFailover(t *testing.T) {
	p := sharetest.NewPersister()
	cluster := brokertest.StartCluster(t, 3, brokertest.WithSharePersister(p))
	adm := cluster.Admin(t)
	createReplicatedTopic(t, adm, "failover", 1, 3)
	cluster.WaitForISR(t, "failover", 3, 30*time.Second)
	id := shareTopicID(t, adm, "failover")
	leader := cluster.Leader("failover", 0)
	var follower int32 = -1
	for _, n := range cluster.Running() {
		if n != leader {
			follower = n
		}
	}

	a := newShareMember(t, cluster.Node(leader).Addr(), "g", "member-a", id)
	wantAcquired(t, "a's first fetch", a.fetch(0))
	produceValues(t, cluster.Client(t, kgo.ProducerBatchCompression(kgo.NoCompression())), "failover", 0, 6)
	wantAcquired(t, "a", a.fetch(0), share.AcquiredRange{First: 0, Last: 5, DeliveryCount: 1})
	if code := a.ack([3]int64{0, 2, int64(share.AckAccept)}); code != 0 {
		t.Fatalf("a's acknowledgement: %v", kerr.ErrorForCode(code))
	}

	f := newShareMember(t, cluster.Node(follower).Addr(), "g", "member-f", id)
	got := f.fetch(0)
	if got.errCode != kerr.NotLeaderForPartition.Code || got.leader.LeaderID != leader {
		t.Fatalf("fetch from follower %d: error %v, current leader %+v, want NOT_LEADER_OR_FOLLOWER and %d",
			follower, kerr.ErrorForCode(got.errCode), got.leader, leader)
	}
	if len(got.endpoints) != 1 || got.endpoints[0].NodeID != leader ||
		net.JoinHostPort(got.endpoints[0].Host, fmt.Sprint(got.endpoints[0].Port)) != cluster.Node(leader).Addr() {
		t.Fatalf("node endpoints %+v, want leader %d at %s", got.endpoints, leader, cluster.Node(leader).Addr())
	}

	cluster.Stop(t, leader)
	var next int32 = -1
	cluster.WaitFor(t, 30*time.Second, "a new leader", func() bool {
		next = cluster.Leader("failover", 0)
		return next >= 0 && next != leader
	})
	b := newShareMember(t, cluster.Node(next).Addr(), "g", "member-b", id)
	cluster.WaitFor(t, 30*time.Second, "the new leader to serve the share partition", func() bool {
		got = b.fetch(0)
		return got.errCode == 0 && len(got.acquired) > 0
	})
	wantAcquired(t, "b from the new leader", got, share.AcquiredRange{First: 3, Last: 5, DeliveryCount: 2})
}
