package broker_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/strait-io/strait/broker/brokertest"
)

// TestSarama drives the broker with a second client library: sarama's
// idempotent sync producer, its partition consumer and a two-member
// consumer group, at the oldest protocol generation Kafka 4.0 still
// serves (2.1) and at 4.0's own.
func TestSarama(t *testing.T) {
	b := brokertest.Start(t)
	for _, v := range []sarama.KafkaVersion{sarama.V2_1_0_0, sarama.V4_0_0_0} {
		t.Run(v.String(), func(t *testing.T) { runSarama(t, b, v) })
	}
}

func saramaConfig(v sarama.KafkaVersion) *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.Version = v
	cfg.ClientID = "strait-sarama-test"
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Return.Successes = true
	cfg.Producer.Idempotent = true
	cfg.Net.MaxOpenRequests = 1 // sarama's requirement for idempotence
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Consumer.Return.Errors = true
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.AutoCommit.Interval = 100 * time.Millisecond
	cfg.Consumer.Group.Heartbeat.Interval = 100 * time.Millisecond
	cfg.Consumer.Group.Session.Timeout = 6 * time.Second
	cfg.Metadata.RefreshFrequency = 0
	return cfg
}

func runSarama(t *testing.T, b *brokertest.Broker, v sarama.KafkaVersion) {
	const partitions, n = 3, 60
	topic := "sarama-" + v.String()
	group := topic + "-group"
	adm := b.Admin(t)
	createTopic(t, adm, topic, partitions)
	ctx := testCtx(t, 60*time.Second)
	cfg := saramaConfig(v)

	prod, err := sarama.NewSyncProducer([]string{b.Addr()}, cfg)
	if err != nil {
		t.Fatalf("sarama producer: %v", err)
	}
	defer prod.Close()
	base := time.UnixMilli(1_700_000_000_000)
	for i := 0; i < n; i++ {
		msg := &sarama.ProducerMessage{
			Topic: topic, Partition: int32(i % partitions),
			Key:       sarama.StringEncoder(fmt.Sprintf("k%d", i)),
			Value:     sarama.StringEncoder(fmt.Sprintf("v%d", i)),
			Headers:   []sarama.RecordHeader{{Key: []byte("i"), Value: []byte(fmt.Sprint(i))}},
			Timestamp: base.Add(time.Duration(i) * time.Millisecond),
		}
		p, off, err := prod.SendMessage(msg)
		if err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
		if p != int32(i%partitions) || off != int64(i/partitions) {
			t.Fatalf("message %d stored at %s@%d, want %s@%d", i, tp(topic, p), off, tp(topic, int32(i%partitions)), i/partitions)
		}
	}

	// Partition consumer: every message with its key, headers and timestamp.
	cons, err := sarama.NewConsumer([]string{b.Addr()}, cfg)
	if err != nil {
		t.Fatalf("sarama consumer: %v", err)
	}
	defer cons.Close()
	for p := int32(0); p < partitions; p++ {
		pc, err := cons.ConsumePartition(topic, p, sarama.OffsetOldest)
		if err != nil {
			t.Fatalf("consume %s: %v", tp(topic, p), err)
		}
		for off := int64(0); off < n/partitions; off++ {
			select {
			case m := <-pc.Messages():
				i := int(off)*partitions + int(p)
				if m.Offset != off || string(m.Key) != fmt.Sprintf("k%d", i) || string(m.Value) != fmt.Sprintf("v%d", i) ||
					len(m.Headers) != 1 || string(m.Headers[0].Value) != fmt.Sprint(i) ||
					!m.Timestamp.Equal(base.Add(time.Duration(i)*time.Millisecond)) {
					t.Fatalf("%s@%d: key %q value %q headers %d ts %v", tp(topic, p), m.Offset, m.Key, m.Value, len(m.Headers), m.Timestamp)
				}
			case err := <-pc.Errors():
				t.Fatalf("consume %s: %v", tp(topic, p), err)
			case <-ctx.Done():
				t.Fatalf("%s: message %d never came", tp(topic, p), off)
			}
		}
		pc.Close()
	}

	// Consumer group with two members: between them they consume every
	// message, and the offsets they commit reach the end.
	h := &saramaHandler{seen: map[string]int{}, want: n, done: make(chan struct{})}
	var wg sync.WaitGroup
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	errs := make(chan error, 2)
	for m := 0; m < 2; m++ {
		cg, err := sarama.NewConsumerGroup([]string{b.Addr()}, group, saramaConfig(v))
		if err != nil {
			t.Fatalf("sarama consumer group: %v", err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer cg.Close() // commits what was marked, then leaves
			for runCtx.Err() == nil {
				if err := cg.Consume(runCtx, []string{topic}, h); err != nil && !errors.Is(err, sarama.ErrClosedConsumerGroup) {
					errs <- err
					return
				}
			}
		}()
	}
	select {
	case <-h.done:
	case err := <-errs:
		t.Fatalf("consumer group: %v", err)
	case <-ctx.Done():
		t.Fatalf("the group consumed %d distinct messages of %d", h.distinct(), n)
	}
	stop()
	wg.Wait()

	offs, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	for p := int32(0); p < partitions; p++ {
		if o, ok := offs.Lookup(topic, p); !ok || o.Err != nil || o.At != n/partitions {
			t.Fatalf("group %s committed %s = %+v, want %d", group, tp(topic, p), o, n/partitions)
		}
	}
}

// saramaHandler is a sarama.ConsumerGroupHandler that marks every
// message and closes done once want distinct messages were seen.
type saramaHandler struct {
	mu   sync.Mutex
	seen map[string]int
	want int
	done chan struct{}
	once sync.Once
}

func (h *saramaHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *saramaHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (h *saramaHandler) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for m := range c.Messages() {
		s.MarkMessage(m, "")
		h.mu.Lock()
		h.seen[string(m.Value)]++
		if len(h.seen) == h.want {
			h.once.Do(func() { close(h.done) })
		}
		h.mu.Unlock()
	}
	return nil
}

func (h *saramaHandler) distinct() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.seen)
}
