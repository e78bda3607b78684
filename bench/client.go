package bench

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ProducerConfig is the client side every workload that produces shares.
// Zero fields take the defaults of DefaultProducerConfig.
type ProducerConfig struct {
	Bootstrap []string // host:port seeds
	// TLS, when not nil, is how every client of the workload reaches the
	// brokers: a TLS listener's (SSL) client configuration.
	TLS   *tls.Config
	Topic string
	// Partitions is the partition count the topic is created with when it
	// does not exist; an existing topic is used as it is.
	Partitions        int32
	ReplicationFactor int16 // -1: the broker's default.replication.factor

	RecordSize int   // value bytes per record; records have no key
	BatchBytes int32 // kgo.ProducerBatchMaxBytes, Kafka's batch.size
	// Linger is kgo.ProducerLinger, Kafka's linger.ms. Unlike the other
	// fields, 0 is a value (no linger), not "the default".
	Linger time.Duration
	Acks   string // "all", "1" or "0"
	// Compression is none, gzip, snappy, lz4 or zstd.
	Compression string
	Producers   int // separate kgo clients, each with its own connections
	// BufferBytes is kgo.MaxBufferedBytes per client, Kafka's buffer.memory.
	BufferBytes int
	// MaxInflight is the produce requests in flight per broker with acks 0
	// or 1 (idempotence off); with acks=all kgo's idempotent producer keeps 5.
	MaxInflight int
	Seed        uint64 // seeds the value PCG
}

// DefaultProducerConfig holds Kafka's producer defaults where the issue does
// not fix a value: 1 KiB records, 16 KiB batches (batch.size), linger 5 ms
// (linger.ms since KIP-1030), acks=all, no compression, buffer.memory 32 MiB,
// max.in.flight.requests.per.connection 5.
func DefaultProducerConfig() ProducerConfig {
	return ProducerConfig{
		Topic:             "strait-bench",
		Partitions:        8,
		ReplicationFactor: -1,
		RecordSize:        1024,
		BatchBytes:        16384,
		Linger:            5 * time.Millisecond,
		Acks:              "all",
		Compression:       "none",
		Producers:         1,
		BufferBytes:       32 << 20,
		MaxInflight:       5,
		Seed:              1,
	}
}

// fillForOwnNodes is fill for a command that starts its own nodes
// (cluster, mirror, reassign, scale): each phase sets Bootstrap once its
// nodes are up, so a placeholder stands in for it meanwhile and passes
// validate.
func (c *ProducerConfig) fillForOwnNodes() {
	c.Bootstrap = []string{"-"}
	c.fill()
}

func (c *ProducerConfig) fill() {
	d := DefaultProducerConfig()
	if c.Topic == "" {
		c.Topic = d.Topic
	}
	if c.Partitions == 0 {
		c.Partitions = d.Partitions
	}
	if c.ReplicationFactor == 0 {
		c.ReplicationFactor = d.ReplicationFactor
	}
	if c.RecordSize == 0 {
		c.RecordSize = d.RecordSize
	}
	if c.BatchBytes == 0 {
		c.BatchBytes = d.BatchBytes
	}
	if c.Acks == "" {
		c.Acks = d.Acks
	}
	if c.Compression == "" {
		c.Compression = d.Compression
	}
	if c.Producers == 0 {
		c.Producers = d.Producers
	}
	if c.BufferBytes == 0 {
		c.BufferBytes = d.BufferBytes
	}
	if c.MaxInflight == 0 {
		c.MaxInflight = d.MaxInflight
	}
}

// Validate reports the first bad field.
func (c *ProducerConfig) Validate() error {
	switch {
	case c.Linger < 0:
		return fmt.Errorf("bench: linger %v < 0", c.Linger)
	case len(c.Bootstrap) == 0:
		return errors.New("bench: no bootstrap address")
	case c.Partitions < 1:
		return fmt.Errorf("bench: partitions %d < 1", c.Partitions)
	case c.RecordSize < 0:
		return fmt.Errorf("bench: record size %d < 0", c.RecordSize)
	case c.BatchBytes < 512:
		// kgo rejects a batch cap below 512 bytes.
		return fmt.Errorf("bench: batch bytes %d < 512", c.BatchBytes)
	case c.Producers < 1:
		return fmt.Errorf("bench: producers %d < 1", c.Producers)
	}
	if _, err := ParseAcks(c.Acks); err != nil {
		return err
	}
	if _, err := ParseCompression(c.Compression); err != nil {
		return err
	}
	return nil
}

// ParseAcks maps Kafka's acks values to kgo's.
func ParseAcks(s string) (kgo.Acks, error) {
	switch s {
	case "all", "-1":
		return kgo.AllISRAcks(), nil
	case "1":
		return kgo.LeaderAck(), nil
	case "0":
		return kgo.NoAck(), nil
	}
	return kgo.Acks{}, fmt.Errorf("bench: acks %q: want all, 1 or 0", s)
}

// ParseCompression maps Kafka's compression.type values to kgo's codecs.
func ParseCompression(s string) (kgo.CompressionCodec, error) {
	switch strings.ToLower(s) {
	case "none":
		return kgo.NoCompression(), nil
	case "gzip":
		return kgo.GzipCompression(), nil
	case "snappy":
		return kgo.SnappyCompression(), nil
	case "lz4":
		return kgo.Lz4Compression(), nil
	case "zstd":
		return kgo.ZstdCompression(), nil
	}
	return kgo.CompressionCodec{}, fmt.Errorf("bench: compression %q: want none, gzip, snappy, lz4 or zstd", s)
}

// producerOpts is the kgo configuration of one producing client; Validate
// has run.
func (c *ProducerConfig) producerOpts() []kgo.Opt {
	acks, _ := ParseAcks(c.Acks)
	codec, _ := ParseCompression(c.Compression)
	opts := append(c.seeds(),
		kgo.DefaultProduceTopic(c.Topic),
		kgo.RequiredAcks(acks),
		kgo.ProducerBatchMaxBytes(c.BatchBytes),
		kgo.ProducerLinger(c.Linger),
		kgo.ProducerBatchCompression(codec),
		kgo.MaxBufferedBytes(c.BufferBytes),
		// A record that cannot be delivered fails after a bounded wait
		// rather than hanging the run.
		kgo.RecordDeliveryTimeout(30*time.Second),
	)
	if c.Acks != "all" && c.Acks != "-1" {
		// kgo's idempotent producer requires acks=all.
		opts = append(opts, kgo.DisableIdempotentWrite(), kgo.MaxProduceRequestsInflightPerBroker(c.MaxInflight))
	}
	return opts
}

// seedOpts are the kgo options reaching the brokers at bootstrap: their
// addresses and, with tc, TLS (kgo sets each dial's ServerName from the
// address, so the broker's certificate is checked against the host).
func seedOpts(bootstrap []string, tc *tls.Config) []kgo.Opt {
	opts := []kgo.Opt{kgo.SeedBrokers(bootstrap...)}
	if tc != nil {
		opts = append(opts, kgo.DialTLSConfig(tc))
	}
	return opts
}

// seeds are the options reaching the workload's brokers, a new slice each
// call (callers append to it).
func (c *ProducerConfig) seeds() []kgo.Opt { return seedOpts(c.Bootstrap, c.TLS) }

// EnsureTopic creates topic with partitions when it does not exist, on the
// brokers seeds reach (seedOpts). An existing topic is kept with whatever
// partition count it has, returned.
func EnsureTopic(ctx context.Context, seeds []kgo.Opt, topic string, partitions int32, rf int16) (int32, error) {
	cl, err := kgo.NewClient(seeds...)
	if err != nil {
		return 0, fmt.Errorf("bench: admin client: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	resp, err := adm.CreateTopic(ctx, partitions, rf, nil, topic)
	if err == nil && resp.Err == nil {
		return partitions, nil
	}
	if err == nil && !errors.Is(resp.Err, kerr.TopicAlreadyExists) {
		return 0, fmt.Errorf("bench: create topic %s: %w", topic, resp.Err)
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return 0, fmt.Errorf("bench: create topic %s: %w", topic, err)
	}
	// The topic exists, but the broker kadm asks may not have applied it
	// yet (a cluster's brokers learn metadata at their own pace): retry
	// UNKNOWN_TOPIC_OR_PARTITION for a while.
	wait, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var n int32
	err = poll(wait, func() (bool, error) {
		md, err := adm.Metadata(wait, topic)
		if err != nil {
			return false, fmt.Errorf("bench: metadata %s: %w", topic, err)
		}
		td, ok := md.Topics[topic]
		switch {
		case ok && td.Err == nil:
			n = int32(len(td.Partitions))
			return true, nil
		case ok && errors.Is(td.Err, kerr.UnknownTopicOrPartition):
			return false, nil
		}
		return false, fmt.Errorf("bench: metadata %s: %v", topic, td.Err)
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}
