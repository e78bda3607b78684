package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
	"github.com/strait-io/strait/storage"
)

// Services are what the handlers delegate every decision to; the broker
// package wires the implementations (raftmeta's controller, replication's
// ReplicaManager, coordinator's GroupCoordinator). Who sent a request is in
// the context (see reqctx). Partition- and resource-level failures are Kafka
// error codes inside the responses; a returned Go error closes the
// connection, as it does in Kafka for a request the broker cannot answer.
type Services struct {
	Cluster ClusterView
	// Topics decides which topics are internal and which missing ones
	// Metadata auto-creates. Nil: no topic is internal and none is
	// auto-created.
	Topics    TopicPolicy
	Replicas  ReplicaService
	Admin     AdminService
	Groups    GroupService
	Producers ProducerIDService
	// Transactions is the transaction coordinator (keys 24-26, 65, 66,
	// and FindCoordinator and InitProducerId for transactional ids). It is
	// optional, as Mirror: while it is nil those keys are neither
	// advertised nor accepted.
	Transactions TransactionService
	// ShareCoordinator is the share coordinator (KIP-932, keys 83-87, and
	// FindCoordinator for share-partition keys through Groups). It is
	// optional: while it is nil those keys are neither advertised nor
	// accepted.
	ShareCoordinator ShareCoordinatorService
	// ShareGroups serves KIP-932 share groups (keys 76, 77 and 90-92,
	// share_group_service.go). Optional, as Mirror: the broker passes it
	// only once the whole share-group path is wired, so while it is nil
	// those keys are neither advertised nor accepted.
	ShareGroups ShareGroupService
	// Quorum serves DescribeQuorum, AddRaftVoter and RemoveRaftVoter
	// (keys 55, 80, 81; quorum_service.go). Optional, as Mirror.
	Quorum QuorumService
	// Mirror serves the KIP-1279 mirror RPCs (keys 9400-9414). It is
	// optional: while it is nil the server neither advertises those keys
	// in ApiVersions nor accepts them (a request for one is refused like
	// an unknown key), so a client never sees an API it cannot use.
	Mirror MirrorService
	// Share serves ShareFetch (78) and ShareAcknowledge (79) for KIP-932
	// share groups (replication/share's Manager). It is optional: while
	// it is nil those keys are neither advertised nor accepted.
	Share ShareService
	// Reassignments serves partition reassignment and broker
	// unregistration (keys 45, 46, 64; reassign_service.go). Optional: while
	// it is nil those keys are neither advertised nor accepted.
	Reassignments ReassignmentService
	// AdvertiseShare lists the share keys in ApiVersions when Share is
	// set. A share consumer needs share-group membership
	// (ShareGroupHeartbeat, key 76) too: a broker without it serves the
	// share keys to a client that sends them anyway, but does not offer
	// them, so kgo and the Java client (which ask ApiVersions first) do
	// not try.
	AdvertiseShare bool
}

// ShareService is the partition leader's side of share groups (KIP-932):
// it acquires records for share consumers and takes their
// acknowledgements. Partition-level failures are error codes in the
// responses.
type ShareService interface {
	ShareFetch(ctx context.Context, req *kmsg.ShareFetchRequest) *kmsg.ShareFetchResponse
	ShareAcknowledge(ctx context.Context, req *kmsg.ShareAcknowledgeRequest) *kmsg.ShareAcknowledgeResponse
}

// servesShare is the served check of the share keys, advertisesShare
// their advertised check.
func servesShare(svc Services) bool     { return svc.Share != nil }
func advertisesShare(svc Services) bool { return svc.AdvertiseShare }

// ClusterView is this broker's view of the cluster.
type ClusterView interface {
	// NodeID is this broker's node.id.
	NodeID() int32
	// Image is the newest applied metadata image.
	Image() *raftmeta.Image
	// ControllerID is the active controller's node id, -1 if unknown.
	ControllerID() int32
	// CatchUpMetadata waits, bounded, until the metadata records this
	// broker has received are applied to Image, and reports whether there
	// were any (Metadata calls it before calling a topic unknown).
	CatchUpMetadata(ctx context.Context) bool
	// AutoCreateTopics creates the named topics with the broker defaults
	// when auto.create.topics.enable is on, returning an error code per
	// topic (0 created or already present). Metadata and Produce call it.
	AutoCreateTopics(ctx context.Context, topics []string) map[string]int16
}

// TopicPolicy is the broker's rule for what Metadata reports of a topic
// and does with a missing one (Kafka's KafkaApis.handleTopicMetadataRequest
// with its AutoTopicCreationManager): the handler only applies it.
type TopicPolicy interface {
	// IsInternalTopic reports whether the topic is internal (Kafka's
	// Topic.isInternal): Metadata's IsInternal flag.
	IsInternalTopic(name string) bool
	// AutoCreatesTopic reports whether a Metadata request that allows
	// auto-creation creates the missing topic name (through
	// ClusterView.AutoCreateTopics): auto.create.topics.enable is on and
	// the name is a valid one of a topic that is not internal.
	AutoCreatesTopic(name string) bool
}

// FetchResult is a Fetch answer whose record data stays in the segment
// files: Slices[i][j] holds the data of Resp.Topics[i].Partitions[j] (whose
// Records field is left nil), so the response writer can send it without
// copying it through Go memory. (replication.FetchResult has the same
// fields; broker/ converts it, as replication may not import wire.)
type FetchResult struct {
	Resp   *kmsg.FetchResponse
	Slices [][]storage.FileSlice
}

// ReplicaService serves the partition data APIs.
type ReplicaService interface {
	// Produce appends and waits as acks asks; with acks=0 the returned
	// response is discarded by the caller.
	Produce(ctx context.Context, req *kmsg.ProduceRequest) *kmsg.ProduceResponse
	// Fetch answers with data or after MaxWaitMillis (long poll).
	Fetch(ctx context.Context, req *kmsg.FetchRequest) *FetchResult
	ListOffsets(ctx context.Context, req *kmsg.ListOffsetsRequest) *kmsg.ListOffsetsResponse
	OffsetForLeaderEpoch(ctx context.Context, req *kmsg.OffsetForLeaderEpochRequest) *kmsg.OffsetForLeaderEpochResponse
	DeleteRecords(ctx context.Context, req *kmsg.DeleteRecordsRequest) *kmsg.DeleteRecordsResponse
	DescribeLogDirs(ctx context.Context, req *kmsg.DescribeLogDirsRequest) *kmsg.DescribeLogDirsResponse
	// AlterReplicaLogDirs moves replicas between the broker's log
	// directories.
	AlterReplicaLogDirs(ctx context.Context, req *kmsg.AlterReplicaLogDirsRequest) *kmsg.AlterReplicaLogDirsResponse
	// WriteTxnMarkers ends transactions on the partitions this broker
	// leads with COMMIT or ABORT markers (an inter-broker API).
	WriteTxnMarkers(ctx context.Context, req *kmsg.WriteTxnMarkersRequest) *kmsg.WriteTxnMarkersResponse
	// DescribeProducers describes the producers the local logs remember.
	DescribeProducers(ctx context.Context, req *kmsg.DescribeProducersRequest) *kmsg.DescribeProducersResponse
}

// AdminService serves topic, config, ACL and SCRAM credential administration.
type AdminService interface {
	CreateTopics(ctx context.Context, req *kmsg.CreateTopicsRequest) *kmsg.CreateTopicsResponse
	DeleteTopics(ctx context.Context, req *kmsg.DeleteTopicsRequest) *kmsg.DeleteTopicsResponse
	CreatePartitions(ctx context.Context, req *kmsg.CreatePartitionsRequest) *kmsg.CreatePartitionsResponse
	DescribeConfigs(ctx context.Context, req *kmsg.DescribeConfigsRequest) *kmsg.DescribeConfigsResponse
	AlterConfigs(ctx context.Context, req *kmsg.AlterConfigsRequest) *kmsg.AlterConfigsResponse
	IncrementalAlterConfigs(ctx context.Context, req *kmsg.IncrementalAlterConfigsRequest) *kmsg.IncrementalAlterConfigsResponse
	CreateACLs(ctx context.Context, req *kmsg.CreateACLsRequest) *kmsg.CreateACLsResponse
	DescribeACLs(ctx context.Context, req *kmsg.DescribeACLsRequest) *kmsg.DescribeACLsResponse
	DeleteACLs(ctx context.Context, req *kmsg.DeleteACLsRequest) *kmsg.DeleteACLsResponse
	// DescribeUserScramCredentials lists users' SCRAM mechanisms and
	// iterations (never their secrets); AlterUserScramCredentials sets and
	// removes credentials in the metadata log.
	DescribeUserScramCredentials(ctx context.Context, req *kmsg.DescribeUserSCRAMCredentialsRequest) *kmsg.DescribeUserSCRAMCredentialsResponse
	AlterUserScramCredentials(ctx context.Context, req *kmsg.AlterUserSCRAMCredentialsRequest) *kmsg.AlterUserSCRAMCredentialsResponse
	ElectLeaders(ctx context.Context, req *kmsg.ElectLeadersRequest) *kmsg.ElectLeadersResponse
	// UpdateFeatures changes finalized feature levels (KIP-584) in the
	// metadata log, through the active controller.
	UpdateFeatures(ctx context.Context, req *kmsg.UpdateFeaturesRequest) *kmsg.UpdateFeaturesResponse
	ClientQuotaService
}

// GroupService is the consumer group coordinator: classic groups and
// KIP-848 consumer groups.
type GroupService interface {
	FindCoordinator(ctx context.Context, req *kmsg.FindCoordinatorRequest) *kmsg.FindCoordinatorResponse
	JoinGroup(ctx context.Context, req *kmsg.JoinGroupRequest) *kmsg.JoinGroupResponse
	SyncGroup(ctx context.Context, req *kmsg.SyncGroupRequest) *kmsg.SyncGroupResponse
	Heartbeat(ctx context.Context, req *kmsg.HeartbeatRequest) *kmsg.HeartbeatResponse
	LeaveGroup(ctx context.Context, req *kmsg.LeaveGroupRequest) *kmsg.LeaveGroupResponse
	OffsetCommit(ctx context.Context, req *kmsg.OffsetCommitRequest) *kmsg.OffsetCommitResponse
	OffsetFetch(ctx context.Context, req *kmsg.OffsetFetchRequest) *kmsg.OffsetFetchResponse
	OffsetDelete(ctx context.Context, req *kmsg.OffsetDeleteRequest) *kmsg.OffsetDeleteResponse
	// TxnOffsetCommit commits offsets in a producer's transaction: they
	// take effect when the transaction commits (KIP-98, KIP-447).
	TxnOffsetCommit(ctx context.Context, req *kmsg.TxnOffsetCommitRequest) *kmsg.TxnOffsetCommitResponse
	ListGroups(ctx context.Context, req *kmsg.ListGroupsRequest) *kmsg.ListGroupsResponse
	DescribeGroups(ctx context.Context, req *kmsg.DescribeGroupsRequest) *kmsg.DescribeGroupsResponse
	DeleteGroups(ctx context.Context, req *kmsg.DeleteGroupsRequest) *kmsg.DeleteGroupsResponse
	ConsumerGroupHeartbeat(ctx context.Context, req *kmsg.ConsumerGroupHeartbeatRequest) *kmsg.ConsumerGroupHeartbeatResponse
	ConsumerGroupDescribe(ctx context.Context, req *kmsg.ConsumerGroupDescribeRequest) *kmsg.ConsumerGroupDescribeResponse
}

// ProducerIDService hands out producer ids (InitProducerId).
type ProducerIDService interface {
	InitProducerID(ctx context.Context, req *kmsg.InitProducerIDRequest) *kmsg.InitProducerIDResponse
}

// TransactionService is the transaction coordinator (KIP-98). The broker
// also sends it FindCoordinator for transactional ids (key type 1) and
// InitProducerId for transactional producers.
type TransactionService interface {
	AddPartitionsToTxn(ctx context.Context, req *kmsg.AddPartitionsToTxnRequest) *kmsg.AddPartitionsToTxnResponse
	AddOffsetsToTxn(ctx context.Context, req *kmsg.AddOffsetsToTxnRequest) *kmsg.AddOffsetsToTxnResponse
	EndTxn(ctx context.Context, req *kmsg.EndTxnRequest) *kmsg.EndTxnResponse
	DescribeTransactions(ctx context.Context, req *kmsg.DescribeTransactionsRequest) *kmsg.DescribeTransactionsResponse
	ListTransactions(ctx context.Context, req *kmsg.ListTransactionsRequest) *kmsg.ListTransactionsResponse
}

// servesTransactions is the served check of the transaction keys.
func servesTransactions(svc Services) bool { return svc.Transactions != nil }

// ShareCoordinatorService is the share coordinator (KIP-932): the durable
// state of share-partitions in __share_group_state, read and written by
// the share-partition leaders (inter-broker RPCs; Kafka checks
// CLUSTER_ACTION) and initialized, deleted and summarized for the group
// coordinator. Per-share-partition failures are error codes in the
// responses.
type ShareCoordinatorService interface {
	InitializeShareGroupState(ctx context.Context, req *kmsg.InitializeShareGroupStateRequest) *kmsg.InitializeShareGroupStateResponse
	ReadShareGroupState(ctx context.Context, req *kmsg.ReadShareGroupStateRequest) *kmsg.ReadShareGroupStateResponse
	WriteShareGroupState(ctx context.Context, req *kmsg.WriteShareGroupStateRequest) *kmsg.WriteShareGroupStateResponse
	DeleteShareGroupState(ctx context.Context, req *kmsg.DeleteShareGroupStateRequest) *kmsg.DeleteShareGroupStateResponse
	ReadShareGroupStateSummary(ctx context.Context, req *kmsg.ReadShareGroupStateSummaryRequest) *kmsg.ReadShareGroupStateSummaryResponse
}

// servesShareCoordinator is the served check of the share coordinator's
// keys.
func servesShareCoordinator(svc Services) bool { return svc.ShareCoordinator != nil }

// MirrorService serves the cluster mirroring RPCs of KIP-1279 (types in
// raftmeta/mirrormsg). As for the other services, per-mirror, per-topic and
// per-partition failures are error codes in the response (mirrormsg's
// errors.go); a nil response is a bug and closes the connection.
type MirrorService interface {
	// Admin RPCs (kmsg.AdminRequest): a client sends them to the active
	// controller, and a broker that is not it forwards them.
	CreateMirror(ctx context.Context, req *mirrormsg.CreateMirrorRequest) *mirrormsg.CreateMirrorResponse
	DeleteMirror(ctx context.Context, req *mirrormsg.DeleteMirrorRequest) *mirrormsg.DeleteMirrorResponse
	StartMirrorTopics(ctx context.Context, req *mirrormsg.StartMirrorTopicsRequest) *mirrormsg.StartMirrorTopicsResponse
	StopMirrorTopics(ctx context.Context, req *mirrormsg.StopMirrorTopicsRequest) *mirrormsg.StopMirrorTopicsResponse
	PauseMirrorTopics(ctx context.Context, req *mirrormsg.PauseMirrorTopicsRequest) *mirrormsg.PauseMirrorTopicsResponse
	ResumeMirrorTopics(ctx context.Context, req *mirrormsg.ResumeMirrorTopicsRequest) *mirrormsg.ResumeMirrorTopicsResponse
	// BumpLeaderEpochs is sent by a mirror partition's leader to the
	// controller (PartitionChangeRecord.MinLeaderEpoch).
	BumpLeaderEpochs(ctx context.Context, req *mirrormsg.BumpLeaderEpochsRequest) *mirrormsg.BumpLeaderEpochsResponse

	// Any broker answers these from its metadata image.
	ListMirrors(ctx context.Context, req *mirrormsg.ListMirrorsRequest) *mirrormsg.ListMirrorsResponse
	DescribeMirrors(ctx context.Context, req *mirrormsg.DescribeMirrorsRequest) *mirrormsg.DescribeMirrorsResponse

	// The __mirror_state coordinator's RPCs: partition leaders write their
	// mirror state, and read the Last Mirrored Epoch (also from a source
	// cluster, when preparing a failback).
	ReadMirrorStates(ctx context.Context, req *mirrormsg.ReadMirrorStatesRequest) *mirrormsg.ReadMirrorStatesResponse
	WriteMirrorStates(ctx context.Context, req *mirrormsg.WriteMirrorStatesRequest) *mirrormsg.WriteMirrorStatesResponse

	// DescribeScramCredentialSecrets exports this node's SCRAM
	// credentials for a mirror's SCRAM sync (Strait's key 9412); the wire
	// server asks only for a request that came on an encrypted listener.
	DescribeScramCredentialSecrets(ctx context.Context, req *mirrormsg.DescribeScramCredentialSecretsRequest) *mirrormsg.DescribeScramCredentialSecretsResponse

	// SyncMirrorGroupOffsets has the mirror's syncer run one consumer
	// group offset round now (Strait's key 9414, issue 27's promotion
	// barrier); any broker takes it and forwards it to the syncer's.
	SyncMirrorGroupOffsets(ctx context.Context, req *mirrormsg.SyncMirrorGroupOffsetsRequest) *mirrormsg.SyncMirrorGroupOffsetsResponse
}
