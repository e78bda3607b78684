package broker_test

import (
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/compress"

	"github.com/strait-io/strait/broker/brokertest"
)

// TestKafkaGo drives a three-node cluster with segmentio/kafka-go, a Go
// client with its own protocol code (not franz-go's or sarama's): its Conn
// lists every broker and creates a replicated topic through a node that
// is not the controller (forwarded); its Writer produces with acks=all under
// every codec; a partition Reader reads keys, values and headers back; and
// two group Readers split the partitions and commit what they read.
func TestKafkaGo(t *testing.T) {
	c := brokertest.StartCluster(t, 3, brokertest.WithConfig("offsets.topic.replication.factor=3"))
	ctx := testCtx(t, 90*time.Second)
	addrs := c.Addrs()

	var notController string
	for _, id := range c.Running() {
		if id != c.Controller() {
			notController = c.Node(id).Addr()
			break
		}
	}
	conn, err := kafka.DialContext(ctx, "tcp", notController)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var want []string
	for _, id := range c.Running() {
		want = append(want, fmt.Sprintf("%d@%s", id, c.Node(id).Addr()))
	}
	var got []string
	// A node lists a broker once it has seen the broker unfenced.
	c.WaitFor(t, 10*time.Second, "kafka-go to see every broker", func() bool {
		brokers, err := conn.Brokers()
		if err != nil {
			t.Fatalf("kafka-go Brokers: %v", err)
		}
		got = got[:0]
		for _, b := range brokers {
			got = append(got, fmt.Sprintf("%d@%s:%d", b.ID, b.Host, b.Port))
		}
		sort.Strings(got)
		return slices.Equal(got, want)
	})

	const partitions, perCodec = 4, 500
	codecs := []compress.Compression{compress.None, compress.Gzip, compress.Snappy, compress.Lz4, compress.Zstd}
	for _, codec := range codecs {
		name := codec.String()
		topic := "kafkago-" + name
		if err := conn.CreateTopics(kafka.TopicConfig{Topic: topic, NumPartitions: partitions, ReplicationFactor: 3}); err != nil {
			t.Fatalf("kafka-go CreateTopics %s through a node that is not the controller: %v", topic, err)
		}
		c.WaitForISR(t, topic, 3, 10*time.Second)

		// A transport of its own: kafka-go's default one answers a
		// writer from metadata cached for MetadataTTL (6 s), which does
		// not have a topic created since, whatever the broker.
		tr := &kafka.Transport{}
		defer tr.CloseIdleConnections()
		w := &kafka.Writer{
			Addr: kafka.TCP(addrs...), Topic: topic, RequiredAcks: kafka.RequireAll,
			Balancer: &kafka.Hash{}, BatchTimeout: 5 * time.Millisecond, Compression: codec,
			Transport: tr,
		}
		var msgs []kafka.Message
		for i := range perCodec {
			msgs = append(msgs, kafka.Message{
				Key:     []byte(fmt.Sprintf("k%d", i%7)),
				Value:   []byte(fmt.Sprintf("%s-%d", name, i)),
				Headers: []kafka.Header{{Key: "codec", Value: []byte(name)}},
			})
		}
		if err := w.WriteMessages(ctx, msgs...); err != nil {
			t.Fatalf("kafka-go %s write: %v", name, err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}

		seen := map[string]bool{}
		for p := range partitions {
			r := kafka.NewReader(kafka.ReaderConfig{Brokers: addrs, Topic: topic, Partition: p, MaxWait: 100 * time.Millisecond})
			last, err := r.ReadLag(ctx)
			if err != nil {
				t.Fatalf("kafka-go %s lag of %d: %v", name, p, err)
			}
			for range last {
				m, err := r.ReadMessage(ctx)
				if err != nil {
					t.Fatalf("kafka-go %s read of %d: %v", name, p, err)
				}
				var i int
				if _, err := fmt.Sscanf(string(m.Value), name+"-%d", &i); err != nil || seen[string(m.Value)] {
					t.Fatalf("kafka-go %s: unexpected or repeated value %q", name, m.Value)
				}
				seen[string(m.Value)] = true
				if string(m.Key) != fmt.Sprintf("k%d", i%7) || len(m.Headers) != 1 || string(m.Headers[0].Value) != name {
					t.Fatalf("kafka-go %s: %q has key %q and headers %v", name, m.Value, m.Key, m.Headers)
				}
			}
			r.Close()
		}
		if len(seen) != perCodec {
			t.Fatalf("kafka-go %s: read %d values back, want %d", name, len(seen), perCodec)
		}
	}

	// Two members of one group split the uncompressed topic and commit.
	const group = "kafkago-group"
	topic := "kafkago-" + compress.None.String()
	var mu sync.Mutex
	read := map[int]map[string]bool{0: {}, 1: {}}
	total := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(read[0]) + len(read[1])
	}
	var wg sync.WaitGroup
	var readers []*kafka.Reader
	for member := range 2 {
		r := kafka.NewReader(kafka.ReaderConfig{
			Brokers: addrs, GroupID: group, Topic: topic, StartOffset: kafka.FirstOffset,
			MaxWait: 100 * time.Millisecond, HeartbeatInterval: 200 * time.Millisecond, CommitInterval: 0,
		})
		readers = append(readers, r)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				m, err := r.FetchMessage(ctx)
				if err != nil {
					t.Logf("member %d stopped reading: %v", member, err)
					return // closed
				}
				if err := r.CommitMessages(ctx, m); err != nil {
					t.Logf("member %d stopped committing: %v", member, err)
					return
				}
				mu.Lock()
				read[member][string(m.Value)] = true
				mu.Unlock()
			}
		}()
	}
	c.WaitFor(t, 60*time.Second, "the kafka-go group to read every message", func() bool { return total() >= perCodec })
	for _, r := range readers {
		r.Close()
	}
	wg.Wait()
	distinct := map[string]bool{}
	for _, vs := range read {
		for v := range vs {
			distinct[v] = true
		}
	}
	if len(distinct) != perCodec {
		t.Fatalf("the group read %d distinct values, want %d", len(distinct), perCodec)
	}
	cl := &kafka.Client{Addr: kafka.TCP(addrs...)}
	off, err := cl.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: {0, 1, 2, 3}}})
	if err != nil {
		t.Fatalf("kafka-go OffsetFetch: %v", err)
	}
	var committed int64
	for _, p := range off.Topics[topic] {
		if p.Error != nil {
			t.Fatalf("committed offset of %s[%d]: %v", topic, p.Partition, p.Error)
		}
		committed += p.CommittedOffset
	}
	if committed != perCodec {
		t.Fatalf("the group committed %d messages' worth of offsets, want %d", committed, perCodec)
	}
	t.Logf("kafka-go group members read %d and %d values", len(read[0]), len(read[1]))
}
