// Package txn is Strait's transaction coordinator (KIP-98, with KIP-447's
// and KIP-890's additions): Kafka's TransactionCoordinator,
// TransactionStateManager and TransactionMarkerChannelManager.
//
// Each transactional id belongs to one partition of the compacted,
// replicated __transaction_state topic (the hash of the id, as groups'),
// and is served by the broker leading that partition, whose leader epoch
// is the coordinator epoch of its transactions. A partition is served by a
// shard (coordinator/runtime's Registry, as the group coordinator's): it
// replays the partition into memory on election, and every change of an
// id's Metadata is first prepared (marked pending: the id answers
// CONCURRENT_TRANSACTIONS meanwhile), then appended to the partition with
// acks=all, then completed in memory, so memory never runs ahead of the
// log. The records are Kafka's TransactionLogKey/Value (kmsg's
// TxnMetadataKey/Value).
//
// A transaction's life: InitProducerId gives the id a producer id and
// bumps its epoch (fencing older producers, aborting their ongoing
// transaction first); AddPartitionsToTxn and AddOffsetsToTxn make it
// Ongoing and record its partitions; EndTxn appends PrepareCommit or
// PrepareAbort and answers, then the markers (COMMIT or ABORT control
// batches, WriteTxnMarkers) are written to every partition's leader, and
// CompleteCommit or CompleteAbort is appended once all are. A new leader
// of the partition finds a prepared transaction when it loads and writes
// its markers again. Transactions that outlive their timeout are aborted
// with a bumped epoch, and ids idle for transactional.id.expiration.ms are
// removed with a tombstone.
//
// Both protocols are served: the classic one (transaction version 0/1:
// the client adds partitions with AddPartitionsToTxn and AddOffsetsToTxn,
// EndTxn v0-4 keeps the epoch), and KIP-890 part 2 (transaction.version 2,
// the default: the partition leader and the group coordinator add the
// partitions for the client, AddPartitionsToTxn v5 without VerifyOnly, and
// every EndTxn v5 bumps the epoch, so a late write of an ended transaction
// is fenced by its markers). Each transaction records its client's
// version (ClientTransactionVersion).
package txn
