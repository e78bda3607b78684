package broker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/broker/brokertest"
)

// initTxnProducer starts a transactional producer for txnID.
func initTxnProducer(ctx context.Context, t *testing.T, cl *kgo.Client, txnID string) *kmsg.InitProducerIDResponse {
	t.Helper()
	initReq := kmsg.NewPtrInitProducerIDRequest()
	initReq.TransactionalID, initReq.TransactionTimeoutMillis = kmsg.StringPtr(txnID), 60000
	initResp, err := initReq.RequestWith(ctx, cl)
	if err != nil || initResp.ErrorCode != 0 {
		t.Fatalf("InitProducerId %s: %v %+v", txnID, err, initResp)
	}
	return initResp
}

// strayTxnProduce starts a transactional producer for txnID and writes one
// transactional batch to topic's partition 0 without AddPartitionsToTxn,
// as a produce retried after its transaction ended does; it returns the
// partition's error.
func strayTxnProduce(ctx context.Context, t *testing.T, cl *kgo.Client, topic, txnID string) error {
	t.Helper()
	initResp := initTxnProducer(ctx, t, cl, txnID)
	_, err := sendProduceTxn(ctx, t, cl, kmsg.StringPtr(txnID), topic, 0, txnBatch(t, initResp.ProducerID, initResp.ProducerEpoch, 0))
	return err
}

// strayTxnOffsetCommit starts a transactional producer for txnID and
// commits an offset of group in its transaction without AddOffsetsToTxn;
// it returns the partition's error.
func strayTxnOffsetCommit(ctx context.Context, t *testing.T, cl *kgo.Client, topic, group, txnID string) error {
	t.Helper()
	initResp := initTxnProducer(ctx, t, cl, txnID)
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = txnID, group, initResp.ProducerID, initResp.ProducerEpoch
	rt := kmsg.NewTxnOffsetCommitRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
	rp.Offset = 1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("TxnOffsetCommit: %v %+v", err, resp)
	}
	return kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode)
}

// TestDynamicTxnPartitionVerification: transaction.partition.verification.enable
// changes at runtime, as Kafka's DynamicProducerStateManagerConfig. On (the
// default), a transactional write to a partition not in its transaction is
// refused (KIP-890); turned off for broker 1 it is appended unverified, and
// still after a restart; turned on again for every broker it is refused.
// The writes are the classic protocol's (Produce v11, TxnOffsetCommit v4):
// under transaction.version 2 a Produce v12 adds its partition itself.
func TestDynamicTxnPartitionVerification(t *testing.T) {
	const topic = "txn-verify"
	b := brokertest.Start(t)
	adm := b.Admin(t)
	ctx := testCtx(t, 90*time.Second)
	createTopic(t, adm, topic, 1)
	cl := b.Client(t, classicTxnVersions())

	if err := strayTxnProduce(ctx, t, cl, topic, "tv-0"); err == nil {
		t.Fatal("with verification on, a write to a partition not in its transaction was appended")
	}
	alter := func(what string, brokers []int32, configs ...kadm.AlterConfig) {
		t.Helper()
		rs, err := adm.AlterBrokerConfigs(ctx, configs, brokers...)
		if err := alterErr(t, rs, err); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	// waitProduce writes with new producers until the answer is as want:
	// the metadata subscriber applies an alteration after it is answered.
	n := 0
	waitProduce := func(appended bool, what string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			n++
			err := strayTxnProduce(ctx, t, cl, topic, fmt.Sprint("tv-", n))
			if (err == nil) == appended {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: a stray transactional write still answered %v", what, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	alter("turn verification off for broker 1", []int32{1}, set("transaction.partition.verification.enable", "false"))
	if got := describedConfig(t, adm, true, "1", "transaction.partition.verification.enable"); got != "false (DYNAMIC_BROKER_CONFIG)" {
		t.Fatalf("transaction.partition.verification.enable described as %s", got)
	}
	waitProduce(true, "verification off")
	// The group coordinator reads it too (TxnOffsetCommit, KIP-890).
	if err := strayTxnOffsetCommit(ctx, t, cl, topic, "tv-group", "tv-commit"); err != nil {
		t.Fatalf("with verification off, a TxnOffsetCommit without AddOffsetsToTxn answered %v", err)
	}

	b.Restart(t)
	adm, cl = b.Admin(t), b.Client(t, classicTxnVersions())
	if err := strayTxnProduce(ctx, t, cl, topic, "tv-restarted"); err != nil {
		t.Fatalf("after a restart with verification off dynamically, a stray write answered %v", err)
	}

	alter("turn verification on for every broker", nil, set("transaction.partition.verification.enable", "true"))
	alter("delete broker 1's", []int32{1}, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: "transaction.partition.verification.enable"})
	if got := describedConfig(t, adm, true, "1", "transaction.partition.verification.enable"); got != "true (DYNAMIC_DEFAULT_BROKER_CONFIG)" {
		t.Fatalf("transaction.partition.verification.enable described as %s", got)
	}
	waitProduce(false, "verification on again")
	if err := strayTxnOffsetCommit(ctx, t, cl, topic, "tv-group-2", "tv-commit-2"); err == nil {
		t.Fatal("with verification on, a TxnOffsetCommit without AddOffsetsToTxn was written")
	}
}
