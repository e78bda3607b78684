package broker_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
)

// TestSaramaTransactions: sarama's transactional producer (KIP-98 as
// sarama implements it: InitProducerId with a transactional id,
// AddPartitionsToTxn before the first record to a partition, EndTxn)
// commits one transaction and aborts another, unchanged, against one node
// and a three-node cluster (RF=3 data, __transaction_state RF=3). sarama's
// read_committed consumer then reads only the committed records, each
// once; its read_uncommitted consumer reads both transactions. It runs at
// the oldest protocol generation Kafka 4.0 serves (2.1: EndTxn v1,
// AddPartitionsToTxn v1) and at 4.0's own (flexible v3s).
func TestSaramaTransactions(t *testing.T) {
	versions := []sarama.KafkaVersion{sarama.V2_1_0_0, sarama.V4_0_0_0}
	t.Run("1 node", func(t *testing.T) {
		b := brokertest.Start(t)
		for _, v := range versions {
			t.Run(v.String(), func(t *testing.T) {
				runSaramaTxn(t, []string{b.Addr()}, b.Admin(t), func(opts ...kgo.Opt) *kgo.Client { return b.Client(t, opts...) }, 1, v)
			})
		}
	})
	t.Run("3 nodes", func(t *testing.T) {
		c := brokertest.StartCluster(t, 3,
			brokertest.WithConfig("transaction.state.log.num.partitions=3", "min.insync.replicas=2"))
		for _, v := range versions {
			t.Run(v.String(), func(t *testing.T) {
				runSaramaTxn(t, c.Addrs(), c.Admin(t), func(opts ...kgo.Opt) *kgo.Client { return c.Client(t, opts...) }, 3, v)
			})
		}
	})
}

// saramaTxnCounts is what a sarama consumer read of the two transactions,
// by value prefix, and how many values it read more than once.
type saramaTxnCounts struct {
	committed, aborted, duplicates int
}

func runSaramaTxn(t *testing.T, addrs []string, adm *kadm.Client, client func(...kgo.Opt) *kgo.Client, rf int16, v sarama.KafkaVersion) {
	const partitions, perTxn = 3, 30
	topic := "sarama-txn-" + v.String()
	createReplicatedTopic(t, adm, topic, partitions, rf)

	cfg := saramaConfig(v)
	cfg.Producer.Transaction.ID = "sarama-txn-" + v.String()
	cfg.Producer.Transaction.Timeout = 20 * time.Second
	cfg.Producer.Return.Errors = true
	prod, err := sarama.NewAsyncProducer(addrs, cfg)
	if err != nil {
		t.Fatalf("sarama transactional producer: %v", err)
	}
	defer prod.Close()
	if !prod.IsTransactional() {
		t.Fatal("sarama's producer is not transactional")
	}
	saramaTxn(t, prod, topic, partitions, "committed", perTxn, true)
	saramaTxn(t, prod, topic, partitions, "aborted", perTxn, false)

	// An end record per partition, outside any transaction: a
	// read_committed consumer reaches it only once both transactions'
	// markers are written and the last stable offset passed them.
	endValue := fmt.Sprintf("end-%d", time.Now().UnixNano())
	var ends []*kgo.Record
	for p := range int32(partitions) {
		ends = append(ends, &kgo.Record{Topic: topic, Partition: p, Value: []byte(endValue)})
	}
	produceSync(t, client(kgo.RecordPartitioner(kgo.ManualPartitioner())), ends...)

	got := readSaramaTxn(t, addrs, v, sarama.ReadCommitted, topic, partitions, endValue)
	t.Logf("sarama read_committed: committed=%d aborted=%d duplicates=%d", got.committed, got.aborted, got.duplicates)
	if want := (saramaTxnCounts{committed: partitions * perTxn}); got != want {
		t.Fatalf("sarama read_committed read %+v, want %+v", got, want)
	}
	got = readSaramaTxn(t, addrs, v, sarama.ReadUncommitted, topic, partitions, endValue)
	t.Logf("sarama read_uncommitted: committed=%d aborted=%d duplicates=%d", got.committed, got.aborted, got.duplicates)
	if want := (saramaTxnCounts{committed: partitions * perTxn, aborted: partitions * perTxn}); got != want {
		t.Fatalf("sarama read_uncommitted read %+v, want %+v", got, want)
	}

	described, err := adm.DescribeTransactions(testCtx(t, 10*time.Second), cfg.Producer.Transaction.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d := described[cfg.Producer.Transaction.ID]; d.Err != nil || d.State != "CompleteAbort" {
		t.Fatalf("DescribeTransactions after the abort: state %q, err %v", d.State, d.Err)
	}
}

// saramaTxn runs one transaction of n records per partition with prod,
// waits until every record is acknowledged (so the log holds them whatever
// the ending), and commits or aborts it.
func saramaTxn(t *testing.T, prod sarama.AsyncProducer, topic string, partitions int32, prefix string, n int, commit bool) {
	t.Helper()
	if err := prod.BeginTxn(); err != nil {
		t.Fatalf("BeginTxn: %v", err)
	}
	go func() {
		for p := range partitions {
			for i := range n {
				prod.Input() <- &sarama.ProducerMessage{Topic: topic, Partition: p, Value: sarama.StringEncoder(fmt.Sprintf("%s-%d-%d", prefix, p, i))}
			}
		}
	}()
	timeout := time.After(30 * time.Second)
	for acked := 0; acked < int(partitions)*n; acked++ {
		select {
		case <-prod.Successes():
		case err := <-prod.Errors():
			t.Fatalf("%s transaction: produce: %v", prefix, err)
		case <-timeout:
			t.Fatalf("%s transaction: %d of %d records acknowledged", prefix, acked, int(partitions)*n)
		}
	}
	end, name := prod.CommitTxn, "CommitTxn"
	if !commit {
		end, name = prod.AbortTxn, "AbortTxn"
	}
	if err := end(); err != nil {
		t.Fatalf("%s: %v (status %v)", name, err, prod.TxnStatus())
	}
	if st := prod.TxnStatus(); st&sarama.ProducerTxnFlagReady == 0 {
		t.Fatalf("after %s the producer's status is %v, want ready", name, st)
	}
}

// readSaramaTxn reads every partition of topic from its start with a
// sarama consumer at isolation, up to endValue, and counts the
// transactions' records it returned.
func readSaramaTxn(t *testing.T, addrs []string, v sarama.KafkaVersion, isolation sarama.IsolationLevel, topic string, partitions int32, endValue string) saramaTxnCounts {
	t.Helper()
	ctx := testCtx(t, 30*time.Second)
	cfg := saramaConfig(v)
	cfg.Consumer.IsolationLevel = isolation
	// Closing a partition consumer waits out its fetch in flight.
	cfg.Consumer.MaxWaitTime = 50 * time.Millisecond
	cons, err := sarama.NewConsumer(addrs, cfg)
	if err != nil {
		t.Fatalf("sarama consumer: %v", err)
	}
	defer cons.Close()
	var got saramaTxnCounts
	seen := map[string]bool{}
	for p := range partitions {
		pc, err := cons.ConsumePartition(topic, p, sarama.OffsetOldest)
		if err != nil {
			t.Fatalf("consume %s: %v", tp(topic, p), err)
		}
		if err := readSaramaPartition(ctx, pc, endValue, func(v string) {
			if seen[v] {
				got.duplicates++
			}
			seen[v] = true
			switch {
			case strings.HasPrefix(v, "committed-"):
				got.committed++
			case strings.HasPrefix(v, "aborted-"):
				got.aborted++
			}
		}); err != nil {
			t.Fatalf("sarama (isolation %d) reading %s: %v; read %+v so far", isolation, tp(topic, p), err, got)
		}
		pc.Close()
	}
	return got
}

// readSaramaPartition hands each value pc returns to each until endValue.
func readSaramaPartition(ctx context.Context, pc sarama.PartitionConsumer, endValue string, each func(string)) error {
	for {
		select {
		case m := <-pc.Messages():
			if string(m.Value) == endValue {
				return nil
			}
			each(string(m.Value))
		case err := <-pc.Errors():
			return err
		case <-ctx.Done():
			return fmt.Errorf("the end record never came: %w", ctx.Err())
		}
	}
}
