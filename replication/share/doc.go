// Package share is the partition leader's side of KIP-932 share groups:
// the share partitions this broker leads (SharePartition, one per share
// group and topic partition) and the manager that serves ShareFetch (key
// 78) and ShareAcknowledge (key 79) from them, with share sessions.
//
// A SharePartition is a pure state machine, as Kafka's
// kafka.server.share.SharePartition is its heart: the share-partition
// start offset (SPSO), the end of the in-flight window, and the state of
// every in-flight record (AVAILABLE, ACQUIRED with the member holding it
// and the lock's deadline, ACKNOWLEDGED, ARCHIVED) with its delivery
// count. It takes time and log contents as inputs and returns what
// changed; it never reads the log, the clock or the persister itself, so
// tests drive it step by step (testdata/) and with seeded simulations.
//
// The Manager (Kafka's SharePartitionManager with ShareSessionCache and
// DelayedShareFetch) owns the partitions, reads the local leader's log
// through the Logs interface the broker adapts, persists every state
// change through the Persister (Kafka's DefaultStatePersister writing
// WriteShareGroupState to the share coordinator) before it answers an
// acknowledgement, expires acquisition locks, and parks a ShareFetch
// with nothing to return until records arrive or MaxWaitMs passes. It
// waits on the request's goroutine, never on a network event loop.
//
// Share-group membership (ShareGroupHeartbeat, which member owns which
// partitions) belongs to the group coordinator: ShareFetch does not check
// it, as Kafka does not, and Manager.MemberLeft is the hook the
// coordinator calls when a member leaves.
package share
