package raftmeta

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// memLog is a metadataLog that applies proposals to an FSM in place, so
// controller tests run without raft. gate, when set, holds each proposal
// until a value arrives.
type memLog struct {
	mu       sync.Mutex
	fsm      *FSM
	leader   bool
	index    uint64
	proposed int
	gate     chan struct{}
}

func (m *memLog) Image() *Image                  { return m.fsm.Image() }
func (m *memLog) IsLeader() bool                 { m.mu.Lock(); defer m.mu.Unlock(); return m.leader }
func (m *memLog) Term() uint64                   { return 1 }
func (m *memLog) Sync(ctx context.Context) error { return nil }

func (m *memLog) Propose(records []Record) <-chan error {
	ch := make(chan error, 1)
	m.mu.Lock()
	m.proposed++
	gate := m.gate
	m.mu.Unlock()
	go func() {
		if gate != nil {
			<-gate
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		m.index++
		ch <- m.fsm.applyRecords(m.index, records)
	}()
	return ch
}

func (m *memLog) proposals() int { m.mu.Lock(); defer m.mu.Unlock(); return m.proposed }

// newTestController is a controller on node 1 over a memLog, with the
// given brokers registered and unfenced, and ids from a seeded source.
func newTestController(t *testing.T, cfg Config, brokers ...int32) (*Controller, *memLog) {
	t.Helper()
	if cfg.NodeID == 0 {
		cfg.NodeID = 1
	}
	cfg.Rand = rand.NewChaCha8([32]byte{1})
	cfg.setDefaults()
	log := &memLog{fsm: NewFSM("test", nil), leader: true}
	c := newController(&cfg, log, cfg.Logger)
	for _, id := range brokers {
		if err := c.RegisterBroker(context.Background(), Broker{ID: id, Endpoints: []Endpoint{{Listener: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: "127.0.0.1", Port: 9092 + id}}}); err != nil {
			t.Fatal(err)
		}
	}
	return c, log
}

func createReq(version int16, topics ...kmsg.CreateTopicsRequestTopic) *kmsg.CreateTopicsRequest {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version = version
	req.TimeoutMillis = 5000
	req.Topics = topics
	return req
}

func newTopic(name string, partitions int32, rf int16, configs ...string) kmsg.CreateTopicsRequestTopic {
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic = name
	rt.NumPartitions = partitions
	rt.ReplicationFactor = rf
	for i := 0; i+1 < len(configs); i += 2 {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name = configs[i]
		c.Value = kmsg.StringPtr(configs[i+1])
		rt.Configs = append(rt.Configs, c)
	}
	return rt
}

func mustCreate(t *testing.T, c *Controller, topics ...kmsg.CreateTopicsRequestTopic) {
	t.Helper()
	resp := c.CreateTopics(context.Background(), createReq(7, topics...))
	for _, rt := range resp.Topics {
		if rt.ErrorCode != 0 {
			t.Fatalf("create %s: %v %v", rt.Topic, kerr.ErrorForCode(rt.ErrorCode), deref(rt.ErrorMessage))
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// codeName prints an error code the way kerr names it ("" for none).
func codeName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	if e, ok := kerr.ErrorForCode(code).(*kerr.Error); ok {
		return e.Message
	}
	return "?"
}
