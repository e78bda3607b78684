// Package source is the mirror fetcher's source endpoint (KIP-1279): an
// implementation of replication/fetcher.LeaderEndPoint that reads a mirror's
// partitions from the SOURCE cluster as an ordinary consumer, so the fetcher
// core drives mirror partitions exactly as it drives followers: the same
// fetch states, truncation on DivergingEpoch, offset resets, and byte for
// byte appends through the follower append path.
//
// # Model
//
// A Cluster is one mirror's connection to its source: one franz-go client
// (bootstrap.servers, client id "strait-mirror-<name>", the caller's SASL and
// TLS options), a cache of the source metadata the mirror needs (each
// partition's leader and leader epoch, each topic's id) and what the source
// last said about each partition (high watermark, log start offset, offsets
// skipped, the current error) for describe.
//
// The fetcher core groups partitions per leader endpoint (fetcher.Manager
// keeps one Fetcher per BrokerEndPoint.ID, Kafka's AbstractFetcherManager),
// and Kafka's mirror fetcher manager keeps its fetchers per source broker
// (mirror.num.replica.fetchers "per source broker per mirror"). The driver
// therefore runs one fetcher.Manager per mirror (source broker ids collide
// with the destination's and with other mirrors') whose NewEndPoint is
// Cluster.NewEndPoint, and hands each partition to the fetcher of its
// current source leader (Cluster.Leader). Unlike a follower's endpoint,
// which talks to one broker only, an EndPoint routes every partition of
// every request to that partition's source leader at send time: after a
// source leader change the partition keeps fetching, from the new leader,
// inside the fetcher it already lives in, with no help from the driver.
// The per-leader grouping is then only a matter of parallelism, which the
// driver may restore at its leisure: RemoveFetcherForPartitions first, then
// AddFetcherForPartitions with the new leader and InitOffset -1 (the
// manager does not move a partition between fetchers by itself, and two
// fetchers appending to one log fail it).
//
// InitialFetchState.TopicID should be the mirror topic's id: the endpoint
// checks the source topic against it. Without one, the endpoint adopts the
// source's id on the first fetch.
//
// # Requests
//
// Every request is a consumer's (Kafka's Fetcher/OffsetFetcher, not a
// replica's): Fetch with ReplicaID -1 and no ReplicaState, isolation
// READ_UNCOMMITTED, no session, each partition's CurrentLeaderEpoch set to
// the source leader epoch from the source metadata (-1 when unknown) and its
// LastFetchedEpoch as the core passes it, topics named by id (Fetch v13+);
// ListOffsets EARLIEST/LATEST as a consumer with READ_UNCOMMITTED (LATEST
// is then the source high watermark: a mirror copies only what the source
// committed); OffsetForLeaderEpoch v3+ with ReplicaID -1, the consumer path
// KIP-320 opened (TOPIC DESCRIBE instead of CLUSTER_ACTION). franz-go
// negotiates each request's version with the broker it goes to.
//
// The core's own CurrentLeaderEpoch (the destination leader epoch the
// driver put in InitialFetchState) never reaches the source; it stays in
// the FetchRequest's Partitions, by which the core matches answers to its
// states. Source fencing errors (FENCED_LEADER_EPOCH) therefore reach the
// core as NOT_LEADER_OR_FOLLOWER: the core must retry, not wait for a new
// destination epoch. Leader errors (NOT_LEADER_OR_FOLLOWER,
// LEADER_NOT_AVAILABLE, FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH, ...)
// and a broker that cannot be reached refresh the source metadata before
// the endpoint answers, so the core's retry after its backoff goes to the
// new leader.
//
// # Errors the driver must act on
//
// Partition errors come back to the core as retriable partition error codes
// (the core backs the partition off and retries) and are also reported to
// Config.OnPartitionError and kept in Status.Err. Three are not transient and
// the driver maps them to the mirror partition state machine's FAILED:
//
//   - ErrSourceTopicRecreated: the source topic's id is no longer the mirror
//     topic's id (they are equal by construction: the destination topic is
//     created with the source's id). Mirroring on would copy a different
//     log over this one. FAILED, not retried.
//   - ErrSourceTopicNotFound / ErrSourcePartitionNotFound: the source no
//     longer has the topic or partition. FAILED, retried.
//   - ErrSourceUnsupported: the source broker cannot serve a mirror (Fetch
//     below v12 has no LastFetchedEpoch, so divergence would go unnoticed).
//
// OFFSET_OUT_OF_RANGE goes to the core, which asks FetchLatestOffset and
// FetchEarliestOffset. When the source deleted records past the mirror's
// log end before they were mirrored (retention, DeleteRecords), the
// endpoint refuses the skip (issue 27's loud failure): FetchEarliestOffset
// reports and returns a RecordsDeletedError (ErrSourceRecordsDeleted, fatal:
// FAILED, retried, logged at WARN) naming the offsets lost, and the core
// keeps the log. With Config.SkipDeletedOffsets (mirror config
// mirror.offsets.skip.enable), or for a first copy from offset 0, the core
// restarts the log at the source's log start instead, and the endpoint
// counts those offsets (Status.OffsetsSkipped), logs them and calls
// Config.OnOffsetsSkipped, since data that expired before it was mirrored
// must never be silent.
package source
