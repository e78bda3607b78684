package sim

import (
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
)

// controller is the active controller's part in replication (Kafka's
// ClusterControlManager, BrokerHeartbeatManager and
// ReplicationControlManager, reduced to one partition): broker
// registrations and sessions, fencing, clean elections from the ISR, and
// AlterPartition. Its image is the metadata log's head; nodes catch up
// with it when their link to it works.
type controller struct {
	c   *Cluster
	img *raftmeta.Image
	// lastHeartbeat is each broker's last heartbeat step; registeredAt the
	// image offset of its registration, which it must have applied to be
	// unfenced.
	lastHeartbeat map[int32]int
	registeredAt  map[int32]uint64
	nextEpoch     int64
}

func newController(c *Cluster) *controller {
	return &controller{c: c, img: raftmeta.EmptyImage(), lastHeartbeat: map[int32]int{}, registeredAt: map[int32]uint64{}, nextEpoch: 100}
}

func (ct *controller) partition() *raftmeta.Partition { return ct.img.Topics[topicName].Partitions[0] }

// publish makes img the head of the metadata log.
func (ct *controller) publish(img *raftmeta.Image) {
	img.Offset = ct.img.Offset + 1
	ct.img = img
}

func (ct *controller) cloneImage() *raftmeta.Image {
	n := *ct.img
	n.Brokers = maps.Clone(ct.img.Brokers)
	n.Topics = maps.Clone(ct.img.Topics)
	n.TopicsByID = maps.Clone(ct.img.TopicsByID)
	n.Configs = maps.Clone(ct.img.Configs)
	return &n
}

// changePartition writes a PartitionChangeRecord: f edits a copy, the
// partition epoch goes up.
func (ct *controller) changePartition(why string, f func(p *raftmeta.Partition)) *raftmeta.Partition {
	img := ct.cloneImage()
	old := img.Topics[topicName]
	nt := *old
	np := *old.Partitions[0]
	np.ISR, np.Replicas = slices.Clone(np.ISR), slices.Clone(np.Replicas)
	f(&np)
	np.PartitionEpoch++
	nt.Partitions = []*raftmeta.Partition{&np}
	img.Topics[topicName], img.TopicsByID[nt.ID] = &nt, &nt
	ct.publish(img)
	ct.c.tracef("controller: %s: leader %d epoch %d isr %v partitionEpoch %d", why, np.Leader, np.LeaderEpoch, np.ISR, np.PartitionEpoch)
	return &np
}

func (ct *controller) changeBroker(id int32, f func(b *raftmeta.Broker)) {
	img := ct.cloneImage()
	b := &raftmeta.Broker{ID: id, Endpoints: []raftmeta.Endpoint{{Listener: "PLAINTEXT", Host: "sim", Port: 9000 + id}}}
	if old, ok := img.Brokers[id]; ok {
		cp := *old
		b = &cp
	}
	f(b)
	img.Brokers[id] = b
	ct.publish(img)
}

func (ct *controller) alive(id int32) bool {
	b, ok := ct.img.Brokers[id]
	return ok && !b.Fenced
}

// electFrom is the first replica, in assignment order, that is in isr and
// alive (Kafka's PartitionChangeBuilder with unclean election off), or -1.
func (ct *controller) electFrom(p *raftmeta.Partition, isr []int32) int32 {
	for _, id := range p.Replicas {
		if slices.Contains(isr, id) && ct.alive(id) {
			return id
		}
	}
	return -1
}

// bootstrap registers the brokers and creates the topic: all replicas in
// the ISR, the first leading epoch 0.
func (ct *controller) bootstrap(replicas []int32) {
	for _, id := range replicas {
		ct.register(id)
		ct.changeBroker(id, func(b *raftmeta.Broker) { b.Fenced = false })
	}
	img := ct.cloneImage()
	t := &raftmeta.Topic{Name: topicName, ID: topicID}
	t.Partitions = []*raftmeta.Partition{{Topic: topicName, TopicID: topicID, Replicas: slices.Clone(replicas),
		ISR: slices.Clone(replicas), Leader: replicas[0]}}
	img.Topics[topicName], img.TopicsByID[topicID] = t, t
	ct.publish(img)
}

// register records a broker's (re-)registration: a new epoch, fenced
// until it has caught up with the metadata (Kafka's registerBroker). It
// returns the broker epoch.
func (ct *controller) register(id int32) int64 {
	ct.nextEpoch++
	epoch := ct.nextEpoch
	ct.changeBroker(id, func(b *raftmeta.Broker) { b.Epoch, b.Fenced = epoch, true })
	ct.registeredAt[id] = ct.img.Offset
	ct.lastHeartbeat[id] = ct.c.step
	ct.c.tracef("controller: broker %d registered with epoch %d", id, epoch)
	return epoch
}

// heartbeat renews a broker's session and unfences it once it has
// applied its registration; a leaderless partition whose ISR has it gets
// it as leader.
func (ct *controller) heartbeat(id int32, applied uint64) {
	ct.lastHeartbeat[id] = ct.c.step
	b, ok := ct.img.Brokers[id]
	if !ok || !b.Fenced || applied < ct.registeredAt[id] {
		return
	}
	ct.changeBroker(id, func(b *raftmeta.Broker) { b.Fenced = false })
	ct.c.tracef("controller: broker %d unfenced", id)
	if p := ct.partition(); p.Leader < 0 && slices.Contains(p.ISR, id) {
		ct.changePartition("elect the returning ISR member", func(p *raftmeta.Partition) {
			p.Leader, p.LeaderEpoch = id, p.LeaderEpoch+1
		})
	}
}

// fence fences a broker (its session expired, or it lost power): it leaves
// the ISR unless it is the last member, and if it led, the first alive ISR
// member leads in a new epoch (Kafka's handleBrokerFenced).
func (ct *controller) fence(id int32, why string) {
	if !ct.alive(id) {
		return
	}
	ct.changeBroker(id, func(b *raftmeta.Broker) { b.Fenced = true })
	ct.c.tracef("controller: broker %d fenced (%s)", id, why)
	p := ct.partition()
	if !slices.Contains(p.ISR, id) && p.Leader != id {
		return
	}
	ct.changePartition("fence "+why, func(p *raftmeta.Partition) {
		if len(p.ISR) > 1 {
			p.ISR = slices.DeleteFunc(p.ISR, func(x int32) bool { return x == id })
		}
		if p.Leader == id {
			p.Leader = ct.electFrom(p, slices.DeleteFunc(slices.Clone(p.ISR), func(x int32) bool { return x == id }))
			p.LeaderEpoch++
		}
	})
}

// tick fences brokers whose session expired.
func (ct *controller) tick() {
	for _, id := range ct.c.ids() {
		if ct.alive(id) && ct.c.step-ct.lastHeartbeat[id] > sessionTimeoutSteps {
			ct.fence(id, "session expired")
		}
	}
}

// moveLeader hands leadership to another alive ISR member (a preferred
// election or a controlled shutdown), if there is one.
func (ct *controller) moveLeader() {
	p := ct.partition()
	var candidates []int32
	for _, id := range p.ISR {
		if id != p.Leader && ct.alive(id) {
			candidates = append(candidates, id)
		}
	}
	if len(candidates) == 0 {
		return
	}
	to := candidates[ct.c.rng.IntN(len(candidates))]
	ct.changePartition("move the leader", func(p *raftmeta.Partition) { p.Leader, p.LeaderEpoch = to, p.LeaderEpoch+1 })
}

// alterPartition answers AlterPartition with Kafka's checks, in Kafka's
// order (ReplicationControlManager.validateAlterPartitionData).
func (ct *controller) alterPartition(req *kmsg.AlterPartitionRequest) *kmsg.AlterPartitionResponse {
	resp := req.ResponseKind().(*kmsg.AlterPartitionResponse)
	if b, ok := ct.img.Brokers[req.BrokerID]; !ok || b.Epoch != req.BrokerEpoch {
		resp.ErrorCode = kerr.StaleBrokerEpoch.Code
		return resp
	}
	for _, rt := range req.Topics {
		st := kmsg.NewAlterPartitionResponseTopic()
		st.TopidID, st.Topic = rt.TopicID, rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewAlterPartitionResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.ErrorCode = ct.validateAlter(req.BrokerID, rt.TopicID, &rp)
			if sp.ErrorCode == 0 {
				var isr []int32
				for _, e := range rp.NewEpochISR {
					isr = append(isr, e.BrokerID)
				}
				p := ct.partition()
				if !sameSet(isr, p.ISR) {
					p = ct.changePartition("AlterPartition from "+itoa(req.BrokerID), func(p *raftmeta.Partition) { p.ISR = isr })
				}
				sp.LeaderID, sp.LeaderEpoch, sp.ISR, sp.PartitionEpoch = p.Leader, p.LeaderEpoch, slices.Clone(p.ISR), p.PartitionEpoch
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

func (ct *controller) validateAlter(broker int32, id [16]byte, rp *kmsg.AlterPartitionRequestTopicPartition) int16 {
	if raftmeta.Uuid(id) != topicID || rp.Partition != 0 {
		return kerr.UnknownTopicOrPartition.Code
	}
	p := ct.partition()
	switch {
	case rp.LeaderEpoch > p.LeaderEpoch || rp.PartitionEpoch > p.PartitionEpoch:
		return kerr.NotController.Code
	case rp.LeaderEpoch < p.LeaderEpoch:
		return kerr.FencedLeaderEpoch.Code
	case broker != p.Leader:
		return kerr.InvalidRequest.Code
	case rp.PartitionEpoch < p.PartitionEpoch:
		return kerr.InvalidUpdateVersion.Code
	}
	seen := map[int32]bool{}
	for _, e := range rp.NewEpochISR {
		if seen[e.BrokerID] || !slices.Contains(p.Replicas, e.BrokerID) {
			return kerr.InvalidRequest.Code
		}
		seen[e.BrokerID] = true
	}
	if !seen[p.Leader] {
		return kerr.InvalidRequest.Code
	}
	for _, e := range rp.NewEpochISR {
		b, ok := ct.img.Brokers[e.BrokerID]
		if !ok || b.Fenced || (e.BrokerEpoch != -1 && e.BrokerEpoch != b.Epoch) {
			return kerr.IneligibleReplica.Code
		}
	}
	return 0
}

func sameSet(a, b []int32) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}
