package broker

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/coordinator"
	"github.com/strait-io/strait/coordinator/share"
	"github.com/strait-io/strait/coordinator/txn"
	"github.com/strait-io/strait/replication"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/wire"
)

// transactionTopic is Kafka's transaction state topic.
const transactionTopic = txn.Topic

// startTransactions builds the transaction coordinator (coordinator/txn)
// over __transaction_state and hands it the partitions this broker leads,
// as startGroups does for the group coordinator.
func (n *Node) startTransactions() error {
	tc := n.cfg.Txn
	numPartitions := tc.StateLogNumPartitions
	if t, ok := n.quorum.Image().Topics[transactionTopic]; ok {
		// The partition count of an existing topic wins: ids must keep
		// mapping to the partitions holding them.
		numPartitions = int32(len(t.Partitions))
	}
	offsetsPartitions := n.cfg.Group.OffsetsTopicNumPartitions
	if t, ok := n.quorum.Image().Topics[offsetsTopic]; ok {
		offsetsPartitions = int32(len(t.Partitions))
	}
	c, err := txn.New(txn.Config{
		Log:               coordinatorLog{rm: n.replicas, topic: transactionTopic},
		Image:             n.quorum.Image,
		EnsureTopic:       n.ensureTransactionTopic,
		ProducerID:        n.producerIDs.Generate,
		Markers:           txnMarkers{n},
		OffsetsPartitions: offsetsPartitions,
		NumPartitions:     numPartitions,
		LoadBufferSize:    tc.StateLogLoadBufferSize,
		MaxTimeout:        time.Duration(tc.MaxTimeoutMs) * time.Millisecond,
		IDExpiration:      time.Duration(tc.IDExpirationMs) * time.Millisecond,
		AbortInterval:     time.Duration(tc.AbortTimedOutIntervalMs) * time.Millisecond,
		RemoveInterval:    time.Duration(tc.RemoveExpiredIntervalMs) * time.Millisecond,
		Clock:             n.clock,
		Logger:            n.logger,
	})
	if err != nil {
		return err
	}
	n.txns = c
	n.followLeadership(transactionTopic, c)
	return nil
}

// ensureTransactionTopic creates __transaction_state the way Kafka's
// TransactionStateManager asks for it (transactionTopicConfigs):
// transaction.state.log.num.partitions partitions, compacted,
// uncompressed, min.insync.replicas transaction.state.log.min.isr, no
// unclean leader election, transaction.state.log.segment.bytes segments,
// and a replication factor of transaction.state.log.replication.factor,
// lowered only where fewer brokers are registered.
func (n *Node) ensureTransactionTopic(ctx context.Context) error {
	tc := n.cfg.Txn
	return n.ensureInternalTopic(ctx, transactionTopic, tc.StateLogNumPartitions, tc.StateLogReplicationFactor,
		"transaction.state.log.replication.factor", map[string]string{
			"cleanup.policy":                 "compact",
			"compression.type":               "uncompressed",
			"min.insync.replicas":            fmt.Sprint(tc.StateLogMinISR),
			"segment.bytes":                  fmt.Sprint(tc.StateLogSegmentBytes),
			"unclean.leader.election.enable": "false",
		})
}

// txnMarkers sends the transaction coordinator's WriteTxnMarkers: to this
// broker's replica manager directly, to another broker over the
// inter-broker client.
type txnMarkers struct{ n *Node }

func (m txnMarkers) WriteTxnMarkers(ctx context.Context, broker int32, req *kmsg.WriteTxnMarkersRequest) (*kmsg.WriteTxnMarkersResponse, error) {
	if broker == m.n.cfg.NodeID {
		return m.n.replicas.WriteTxnMarkers(ctx, req), nil
	}
	resp, err := m.n.peers.request(ctx, broker, req)
	if err != nil {
		return nil, err
	}
	return resp.(*kmsg.WriteTxnMarkersResponse), nil
}

// txnVerifier is replication's TxnVerifier (KIP-890): AddPartitionsToTxn
// with VerifyOnly (or, to add the partitions for a transaction version 2
// producer, without) to the coordinator of the transactional id, which is
// this broker's own transaction coordinator or another broker's.
type txnVerifier struct{ n *Node }

var _ replication.TxnVerifier = txnVerifier{}

func (v txnVerifier) VerifyTransaction(ctx context.Context, id string, pid int64, epoch int16, tps []storage.TopicPartition, add bool) (map[storage.TopicPartition]error, error) {
	n := v.n
	c := n.txns
	if c == nil {
		return nil, kerr.CoordinatorNotAvailable
	}
	p, ok := n.quorum.Image().Partition(transactionTopic, c.PartitionFor(id))
	if !ok || p.Leader < 0 {
		return nil, kerr.CoordinatorNotAvailable
	}
	if p.Leader == n.cfg.NodeID {
		// This broker's own coordinator answers in-process, without the
		// request a remote one is sent.
		codes := make([]int16, len(tps))
		if add {
			c.AddPartitions(ctx, id, pid, epoch, tps, codes)
		} else {
			c.VerifyPartitions(id, pid, epoch, tps, codes)
		}
		out := make(map[storage.TopicPartition]error, len(tps))
		for i, tp := range tps {
			out[tp] = kerr.ErrorForCode(codes[i])
		}
		return out, nil
	}
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.Version = 5
	rt := kmsg.NewAddPartitionsToTxnRequestTransaction()
	rt.TransactionalID, rt.ProducerID, rt.ProducerEpoch, rt.VerifyOnly = id, pid, epoch, !add
	byTopic := map[string]int{}
	for _, tp := range tps {
		i, ok := byTopic[tp.Topic]
		if !ok {
			i = len(rt.Topics)
			byTopic[tp.Topic] = i
			t := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
			t.Topic = tp.Topic
			rt.Topics = append(rt.Topics, t)
		}
		rt.Topics[i].Partitions = append(rt.Topics[i].Partitions, tp.Partition)
	}
	req.Transactions = append(req.Transactions, rt)
	r, err := n.peers.request(ctx, p.Leader, req)
	if err != nil {
		return nil, err
	}
	resp := r.(*kmsg.AddPartitionsToTxnResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, err
	}
	out := make(map[storage.TopicPartition]error, len(tps))
	for _, tx := range resp.Transactions {
		for _, t := range tx.Topics {
			for _, pt := range t.Partitions {
				out[storage.TopicPartition{Topic: t.Topic, Partition: pt.Partition}] = kerr.ErrorForCode(pt.ErrorCode)
			}
		}
	}
	for _, tp := range tps {
		if _, ok := out[tp]; !ok {
			out[tp] = kerr.UnknownServerError // the coordinator said nothing of it
		}
	}
	return out, nil
}

// groupsAndTransactions is the GroupService the wire server gets: the
// group coordinator, with FindCoordinator for transactional ids (key type
// 1) answered by the transaction coordinator and for share-partition keys
// (key type 2, KIP-932) by the share coordinator, as KafkaApis.getCoordinator
// routes them.
type groupsAndTransactions struct {
	*coordinator.GroupCoordinator
	txns   *txn.Coordinator
	shares *share.Coordinator
}

var _ wire.GroupService = groupsAndTransactions{}

// coordinatorTypeTransaction is FindCoordinator's key type of a
// transactional id.
const coordinatorTypeTransaction int8 = 1

func (g groupsAndTransactions) FindCoordinator(ctx context.Context, req *kmsg.FindCoordinatorRequest) *kmsg.FindCoordinatorResponse {
	if req.Version >= 1 && req.CoordinatorType == coordinatorTypeTransaction {
		return g.txns.FindCoordinator(ctx, req)
	}
	if req.Version >= 1 && req.CoordinatorType == share.CoordinatorTypeShare {
		return g.shares.FindCoordinator(ctx, req)
	}
	return g.GroupCoordinator.FindCoordinator(ctx, req)
}

// producerIDsService answers InitProducerId: the transaction coordinator
// for a transactional id, the group coordinator's producer id manager for
// an idempotent producer.
type producerIDsService struct {
	groups *coordinator.GroupCoordinator
	txns   *txn.Coordinator
}

func (p producerIDsService) InitProducerID(ctx context.Context, req *kmsg.InitProducerIDRequest) *kmsg.InitProducerIDResponse {
	if req.TransactionalID != nil {
		return p.txns.InitProducerID(ctx, req)
	}
	return p.groups.InitProducerID(ctx, req)
}

// txnOffsetVerifier is the group coordinator's verifier of transactional
// offset commits (KIP-890), asked while
// transaction.partition.verification.enable is on, and its adder of the
// group's partition for a TxnOffsetCommit v5 under transaction.version 2.
func (n *Node) txnOffsetVerifier() coordinator.TxnVerifier {
	v := txnVerifier{n}
	return func(ctx context.Context, id string, pid int64, epoch int16, tp storage.TopicPartition, add bool) error {
		errs, err := v.VerifyTransaction(ctx, id, pid, epoch, []storage.TopicPartition{tp}, add)
		if err != nil {
			return err
		}
		return errs[tp]
	}
}
