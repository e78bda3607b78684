package txn

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage"
)

// The __transaction_state records, as Kafka's TransactionLog writes them:
// the key is TransactionLogKey v0 (the transactional id), the value
// TransactionLogValue, or null (a tombstone) once the id is Dead. kmsg's
// TxnMetadataKey and TxnMetadataValue are those schemas, so the bytes are
// Kafka's and Kafka's tools (kafka-dump-log --transaction-log-decoder)
// read a Strait partition.
//
// The value version follows the client's transaction version as Kafka's
// TransactionVersion.transactionLogValueVersion does: v0 for the classic
// protocol, v1 (flexible, KIP-915, with KIP-890's tagged producer id
// fields) from version 1 on.

// ErrUnknownKeyVersion is a record whose key this version cannot read: a
// future record type, skipped on load as Kafka skips unknown versions.
var ErrUnknownKeyVersion = errors.New("txn: unknown __transaction_state key version")

// encodeKey is the record key of a transactional id.
func encodeKey(id string) []byte {
	k := kmsg.NewTxnMetadataKey()
	k.Version, k.TransactionalID = 0, id
	return k.AppendTo(nil)
}

// encodeValue is the record value of a transition, nil (a tombstone) for
// Dead. Empty carries no partitions (a null array), as in Kafka.
func encodeValue(t Transit) []byte {
	if t.State == Dead {
		return nil
	}
	v := kmsg.NewTxnMetadataValue()
	if t.ClientTransactionVersion >= 1 {
		v.Version = 1
	}
	v.ProducerID, v.ProducerEpoch, v.TimeoutMillis, v.State = t.ProducerID, t.ProducerEpoch, t.TimeoutMs, t.State
	v.LastUpdateTimestamp, v.StartTimestamp = t.LastUpdateMs, t.StartMs
	v.PreviousProducerID, v.NextProducerID, v.ClientTransactionVersion = t.PrevProducerID, t.NextProducerID, t.ClientTransactionVersion
	if t.State != Empty {
		v.Topics = []kmsg.TxnMetadataValueTopic{} // never null outside Empty
		byTopic := map[string][]int32{}
		for tp := range t.Partitions {
			byTopic[tp.Topic] = append(byTopic[tp.Topic], tp.Partition)
		}
		for _, topic := range slices.Sorted(maps.Keys(byTopic)) {
			vt := kmsg.NewTxnMetadataValueTopic()
			vt.Topic, vt.Partitions = topic, byTopic[topic]
			slices.Sort(vt.Partitions)
			v.Topics = append(v.Topics, vt)
		}
	}
	return v.AppendTo(nil)
}

// decodeRecord reads one __transaction_state record: the transactional id
// and its metadata, nil for a tombstone.
func decodeRecord(key, value []byte) (string, *Metadata, error) {
	if len(key) < 2 {
		return "", nil, fmt.Errorf("txn: __transaction_state key of %d bytes", len(key))
	}
	var k kmsg.TxnMetadataKey
	if err := k.ReadFrom(key); err != nil {
		return "", nil, fmt.Errorf("txn: __transaction_state key: %w", err)
	}
	if k.Version != 0 {
		return "", nil, fmt.Errorf("%w: %d", ErrUnknownKeyVersion, k.Version)
	}
	if value == nil {
		return k.TransactionalID, nil, nil
	}
	var v kmsg.TxnMetadataValue
	if err := v.ReadFrom(value); err != nil {
		return "", nil, fmt.Errorf("txn: __transaction_state value of %q: %w", k.TransactionalID, err)
	}
	if v.Version > 1 {
		return "", nil, fmt.Errorf("txn: __transaction_state value of %q has version %d", k.TransactionalID, v.Version)
	}
	if v.State < Empty || v.State > PrepareEpochFence {
		return "", nil, fmt.Errorf("txn: __transaction_state value of %q has state %d", k.TransactionalID, v.State)
	}
	m := &Metadata{TransactionalID: k.TransactionalID, ProducerID: v.ProducerID, PrevProducerID: v.PreviousProducerID,
		NextProducerID: v.NextProducerID, ProducerEpoch: v.ProducerEpoch, LastProducerEpoch: NoProducerEpoch,
		TimeoutMs: v.TimeoutMillis, State: v.State, Partitions: map[storage.TopicPartition]struct{}{},
		StartMs: v.StartTimestamp, LastUpdateMs: v.LastUpdateTimestamp, ClientTransactionVersion: v.ClientTransactionVersion}
	for _, t := range v.Topics {
		for _, p := range t.Partitions {
			m.Partitions[storage.TopicPartition{Topic: t.Topic, Partition: p}] = struct{}{}
		}
	}
	return k.TransactionalID, m, nil
}

// sortedPartitions lists a transaction's partitions in order (answers,
// markers, logs).
func sortedPartitions(ps map[storage.TopicPartition]struct{}) []storage.TopicPartition {
	out := slices.Collect(maps.Keys(ps))
	slices.SortFunc(out, func(a, b storage.TopicPartition) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return out
}
