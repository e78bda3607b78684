// Package mirrormsg holds the message types of the KIP-1279 (Cluster
// Mirroring) RPCs, in the shape of franz-go's kmsg types: each request is a
// kmsg.Request and each response a kmsg.Response, so any franz-go client
// sends them with kgo.Client.Request (or req.RequestWith) and kmsg's
// RequestFormatter frames them, and the wire server decodes them with
// RequestForKey. The error codes of the KIP are in errors.go and the keys
// and versions in one table, APIs (apis.go).
//
// # Where the package lives
//
// The messages are the protocol's schema, as kmsg is for Kafka's own RPCs
// (and org.apache.kafka.common.message is for Kafka's controller): the
// wire server decodes and dispatches them, the mirror clients send them,
// and the controller (raftmeta) takes and answers them. The controller is
// the lowest of those layers and may not import the wire layer above it
// (DESIGN.md §2), so this leaf, which imports only kmsg and kerr, lives
// with it.
//
// # Where the types come from
//
// The types are generated (internal/gen) from the JSON schemas in
// testdata/schemas, Kafka's own schema format; every file starts with a
// comment naming its source. KIP-1279 is not in Apache Kafka: the schemas
// are the prototypes' as recovered in shared/spec/kip-1279-digest.md §2.2,
// using, as the digest recommends, aiven/kafka@cec72d2319b7 ("snapshot A")
// and the newest showuon/kafka file where snapshot A's was not recovered:
//
//	key   RPC                 request                          response
//	9400  CreateMirror        aiven@cec72d23                   aiven@cec72d23
//	9401  StartMirrorTopics   showuon@0dfe7300 + tag           aiven@cec72d23 + tag
//	9402  StopMirrorTopics    showuon@15b72822                 seed (= Start's shape) + tag
//	9403  ResumeMirrorTopics  Pause's shape (digest [INF])     Pause's shape + tag
//	9404  ListMirrors         Strait (empty)                   aiven@cec72d23
//	9405  DescribeMirrors     Strait (MirrorNames, null=all)   aiven@cec72d23 + tags
//	                          + tag
//	9406  ReadMirrorStates    aiven@cec72d23                   aiven@cec72d23 + tags
//	9407  WriteMirrorStates   showuon@01b3013c                 Strait
//	9408  PauseMirrorTopics   aiven@cec72d23                   seed + tag
//	9409  DeleteMirror        Strait (MirrorName)              Strait (Create's shape)
//	9411  BumpLeaderEpochs    aiven@cec72d23 + tags            seed
//	9412  DescribeScramCredentialSecrets  Strait (issue 25)   Strait
//	9413  SyncScramCredentials            Strait (internal)   Strait
//	9414  SyncMirrorGroupOffsets          Strait (issue 27)   Strait
//
// 9412 and 9413 are not KIP-1279's: they sync a mirror's SCRAM users (issue
// 25). 9412 exports the source's salts and keys (never printed: their
// String methods redact them, scram_secrets.go); 9413 is Internal, sent only
// to the active controller over the controller channel, never served on a
// client listener. Their bytes fields are Kafka's "bytes" type. 9414 is
// issue 27's: the promotion barrier (`strait mirror stop`) asks any broker
// to have the mirror's syncer run one consumer group offset round now, so
// the offsets committed on the source up to the cut are on the
// destination before it becomes writable.
//
// "seed" is shared/spec/kip-1279-seed.txt. "Strait" marks a schema the
// sources do not have, designed minimally in Kafka's style. "+ tag(s)"
// marks Strait extensions, all of them tagged fields so the v0 wire format
// of the source is unchanged and a peer built on it ignores them:
//
//   - per-topic ErrorMessage (tag 0) in the Start/Stop/Pause/Resume
//     responses: later revisions add it (digest, ML msg157275 AS33) and the
//     CLI prints the Kafka error name and message of each topic;
//   - per-partition ErrorMessage (tag 0), OffsetsSkipped (tag 1), LagMs
//     (tag 2, default -1) and RetryCount (tag 3) in DescribeMirrorsResponse:
//     `strait mirror describe` shows the last error and the offsets lost to
//     the source's retention (issue 5), the age of the oldest unmirrored
//     record and the retries of a failing partition (issue 6);
//   - LocalOnly (tag 0) in DescribeMirrorsRequest: a broker fanning a
//     DescribeMirrors out to the other brokers asks each for the partitions
//     it leads only (no further fan-out);
//   - Topics (tag 1) in StartMirrorTopicsRequest: the source topics (name,
//     source topic id, partition count) the broker that received the request
//     resolved from its patterns; the controller, which cannot reach the
//     source, creates missing destination topics from them;
//   - BrokerId, BrokerEpoch (tags 0, 1) and per-partition LeaderEpoch (tag 0)
//     in BumpLeaderEpochsRequest: the controller bumps only for the
//     partition's current leader at its current epoch, as AlterPartition
//     fences;
//   - per-partition LeaderEpoch, StateEpoch, LastMirrorOffset, ErrorMessage,
//     RetryAttempt, NonRetryable and PrevState (tags 0-6) in
//     ReadMirrorStatesResponse: what WriteMirrorStates stores, so that a new
//     partition leader rebuilds the whole state and fences its next write
//     (digest: "add a LeaderEpoch int32 per partition"; the state epoch for
//     the seed's fencing; PrevState for whether a stop may record an LME).
//
// The API keys were DESIGN.md §4's 94-108 until issue 32 moved them to
// 9400-9414 (old key + 9306, same order; apis.go says why): upstream, which
// reserves none of them, has since given 94 to UnregisterController (kmsg
// v1.15 knows it), and kerr 134-136 are other errors too, so a client must
// name mirror errors with this package's ErrorForCode. A server still looks
// a key up here before kmsg (RequestForKey). kgo sends any key its max
// versions list and decodes the response with the request's ResponseKind,
// but its default list (kversion.Stable) has no mirror key: build the
// client with kgo.MaxVersions(mirrormsg.MaxVersions(nil)).
//
// # Go names and behaviour
//
// Field names are the schemas' (ThrottleTimeMs, TimeoutMs, MirrorName),
// exported, with a trailing "Id" spelt "ID" as in kmsg (TopicID). Nested
// structs are named after their message and schema struct
// (ReadMirrorStatesResponsePartitionResult). Nullable strings are *string and
// nullable arrays nil for null; uuids are [16]byte. Every struct has
// UnknownTags, Default and New<T>, every message NewPtr<T>, as in kmsg.
// Requests an admin client sends to the controller implement
// kmsg.AdminRequest (Create/Delete, Start/Stop/Pause/Resume, and
// BumpLeaderEpochs, which brokers send to the controller); StartMirrorTopics
// implements kmsg.TimeoutRequest and every response kmsg.ThrottleResponse.
//
// Decoding is stricter than kmsg's (see codec.go): trailing bytes, a null
// where the schema allows none and an array longer than its input are
// errors, and ReadFrom replaces the whole value.
//
// Besides the RPCs, offset_commit_forward.go (hand-written) defines the
// tagged fields Strait adds to Kafka's OffsetCommit for a mirror's
// forward-only group offset sync (issue 27).
//
// Regenerate after editing a schema:
//
//go:generate go run ./internal/gen -schemas testdata/schemas -out .
package mirrormsg
