package wire

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// mirrorStandIn is a MirrorService that records every request it is given
// and answers with a fresh copy of the response canned for its key; a key
// with nothing canned gets a nil response (a service bug the server must
// survive).
type mirrorStandIn struct {
	canned map[int16]func() kmsg.Response // set before the server starts

	mu  sync.Mutex
	got []kmsg.Request
}

func (m *mirrorStandIn) answer(req kmsg.Request) kmsg.Response {
	m.mu.Lock()
	m.got = append(m.got, req)
	m.mu.Unlock()
	if f, ok := m.canned[req.Key()]; ok {
		return f()
	}
	return nil
}

// received returns the requests handled so far, in order.
func (m *mirrorStandIn) received() []kmsg.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]kmsg.Request(nil), m.got...)
}

// as converts answer's result to the method's response type; a missing or
// mistyped canned response gives a nil one.
func as[R kmsg.Response](resp kmsg.Response) R {
	r, _ := resp.(R)
	return r
}

func (m *mirrorStandIn) CreateMirror(_ context.Context, req *mirrormsg.CreateMirrorRequest) *mirrormsg.CreateMirrorResponse {
	return as[*mirrormsg.CreateMirrorResponse](m.answer(req))
}

func (m *mirrorStandIn) DeleteMirror(_ context.Context, req *mirrormsg.DeleteMirrorRequest) *mirrormsg.DeleteMirrorResponse {
	return as[*mirrormsg.DeleteMirrorResponse](m.answer(req))
}

func (m *mirrorStandIn) StartMirrorTopics(_ context.Context, req *mirrormsg.StartMirrorTopicsRequest) *mirrormsg.StartMirrorTopicsResponse {
	return as[*mirrormsg.StartMirrorTopicsResponse](m.answer(req))
}

func (m *mirrorStandIn) StopMirrorTopics(_ context.Context, req *mirrormsg.StopMirrorTopicsRequest) *mirrormsg.StopMirrorTopicsResponse {
	return as[*mirrormsg.StopMirrorTopicsResponse](m.answer(req))
}

func (m *mirrorStandIn) PauseMirrorTopics(_ context.Context, req *mirrormsg.PauseMirrorTopicsRequest) *mirrormsg.PauseMirrorTopicsResponse {
	return as[*mirrormsg.PauseMirrorTopicsResponse](m.answer(req))
}

func (m *mirrorStandIn) ResumeMirrorTopics(_ context.Context, req *mirrormsg.ResumeMirrorTopicsRequest) *mirrormsg.ResumeMirrorTopicsResponse {
	return as[*mirrormsg.ResumeMirrorTopicsResponse](m.answer(req))
}

func (m *mirrorStandIn) BumpLeaderEpochs(_ context.Context, req *mirrormsg.BumpLeaderEpochsRequest) *mirrormsg.BumpLeaderEpochsResponse {
	return as[*mirrormsg.BumpLeaderEpochsResponse](m.answer(req))
}

func (m *mirrorStandIn) ListMirrors(_ context.Context, req *mirrormsg.ListMirrorsRequest) *mirrormsg.ListMirrorsResponse {
	return as[*mirrormsg.ListMirrorsResponse](m.answer(req))
}

func (m *mirrorStandIn) DescribeMirrors(_ context.Context, req *mirrormsg.DescribeMirrorsRequest) *mirrormsg.DescribeMirrorsResponse {
	return as[*mirrormsg.DescribeMirrorsResponse](m.answer(req))
}

func (m *mirrorStandIn) ReadMirrorStates(_ context.Context, req *mirrormsg.ReadMirrorStatesRequest) *mirrormsg.ReadMirrorStatesResponse {
	return as[*mirrormsg.ReadMirrorStatesResponse](m.answer(req))
}

func (m *mirrorStandIn) DescribeScramCredentialSecrets(_ context.Context, req *mirrormsg.DescribeScramCredentialSecretsRequest) *mirrormsg.DescribeScramCredentialSecretsResponse {
	return as[*mirrormsg.DescribeScramCredentialSecretsResponse](m.answer(req))
}

func (m *mirrorStandIn) SyncMirrorGroupOffsets(_ context.Context, req *mirrormsg.SyncMirrorGroupOffsetsRequest) *mirrormsg.SyncMirrorGroupOffsetsResponse {
	return as[*mirrormsg.SyncMirrorGroupOffsetsResponse](m.answer(req))
}

// servedMirrorAPIs are the mirror RPCs a client listener serves: all but
// the internal ones.
func servedMirrorAPIs() []mirrormsg.API {
	var out []mirrormsg.API
	for _, a := range mirrormsg.APIs {
		if !a.Internal {
			out = append(out, a)
		}
	}
	return out
}

func (m *mirrorStandIn) WriteMirrorStates(_ context.Context, req *mirrormsg.WriteMirrorStatesRequest) *mirrormsg.WriteMirrorStatesResponse {
	return as[*mirrormsg.WriteMirrorStatesResponse](m.answer(req))
}

// mirrorCase is one mirror RPC with a request and a response that set
// most fields, tagged ones included, to values other than their defaults,
// so a field lost or shifted on the way shows.
type mirrorCase struct {
	name string
	req  func() kmsg.Request
	resp func() kmsg.Response
}

func strp(s string) *string { return &s }

// mirrorCases has one case per served mirror API key, in mirrormsg.APIs'
// order.
func mirrorCases() []mirrorCase {
	tid := [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	return []mirrorCase{
		{"CreateMirror", func() kmsg.Request {
			r := mirrormsg.NewPtrCreateMirrorRequest()
			r.MirrorName = "m1"
			r.Config = []mirrormsg.CreateMirrorRequestMirrorConfig{
				{Name: "bootstrap.servers", Value: strp("src:9092")},
				{Name: "mirror.topics.include", Value: nil},
			}
			return r
		}, func() kmsg.Response {
			r := mirrormsg.NewPtrCreateMirrorResponse()
			r.ErrorCode, r.ErrorMessage = mirrormsg.ClusterMirrorAlreadyExists.Code, strp("m1 exists")
			return r
		}},
		{"StartMirrorTopics", func() kmsg.Request {
			r := mirrormsg.NewPtrStartMirrorTopicsRequest()
			r.MirrorName, r.IncludePatterns, r.ExcludePatterns, r.TimeoutMs = "m1", []string{"orders.*", "pay"}, []string{"orders-tmp"}, 4321
			return r
		}, func() kmsg.Response {
			r := mirrormsg.NewPtrStartMirrorTopicsResponse()
			r.MirrorName = "m1"
			r.Topics = []mirrormsg.StartMirrorTopicsResponseTopicResult{
				{Name: "orders.eu"},
				{Name: "pay", ErrorCode: mirrormsg.TopicAlreadyInClusterMirror.Code, ErrorMessage: strp("pay is in m0")},
			}
			return r
		}},
		{"StopMirrorTopics", func() kmsg.Request {
			r := mirrormsg.NewPtrStopMirrorTopicsRequest()
			r.MirrorName, r.StateOffset, r.Patterns = "m1", 77, []string{"orders.*"}
			r.Topics = []mirrormsg.StopMirrorTopicsRequestTopicMetadata{{TopicName: "pay"}}
			return r
		}, func() kmsg.Response {
			r := mirrormsg.NewPtrStopMirrorTopicsResponse()
			r.MirrorName = "m1"
			r.Topics = []mirrormsg.StopMirrorTopicsResponseTopicResult{
				{Name: "pay", ErrorCode: mirrormsg.MirrorTopicBeingStopped.Code, ErrorMessage: strp("stopping")},
			}
			return r
		}},
		{"ResumeMirrorTopics", func() kmsg.Request {
			r := mirrormsg.NewPtrResumeMirrorTopicsRequest()
			r.MirrorName = "m1"
			r.Topics = []mirrormsg.ResumeMirrorTopicsRequestTopicData{{TopicID: tid, TopicName: "pay"}}
			return r
		}, func() kmsg.Response {
			r := mirrormsg.NewPtrResumeMirrorTopicsResponse()
			r.MirrorName = "m1"
			r.Topics = []mirrormsg.ResumeMirrorTopicsResponseTopicResult{
				{Name: "pay", ErrorCode: mirrormsg.MirrorTopicNotPaused.Code, ErrorMessage: strp("not paused")},
			}
			return r
		}},
		{"ListMirrors", func() kmsg.Request {
			return mirrormsg.NewPtrListMirrorsRequest()
		}, func() kmsg.Response {
			r := mirrormsg.NewPtrListMirrorsResponse()
			r.Mirrors = []mirrormsg.ListMirrorsResponseListedMirror{
				{MirrorName: "m1", SourceBootstrap: "src:9092", SourceClusterID: "src-cluster", TopicCount: 3},
				{MirrorName: "m2", SourceBootstrap: "b:1", SourceClusterID: "b", TopicCount: 0},
			}
			return r
		}},
		{"DescribeMirrors", func() kmsg.Request {
			r := mirrormsg.NewPtrDescribeMirrorsRequest()
			r.MirrorNames = []string{"m1", "nope"}
			return r
		}, func() kmsg.Response {
			r := mirrormsg.NewPtrDescribeMirrorsResponse()
			p := mirrormsg.NewDescribeMirrorsResponsePartitionDetail()
			p.PartitionIndex, p.SourceOffset, p.DestinationOffset, p.Lag = 4, 1000, 990, 10
			p.State, p.LastMirrorEpoch, p.ErrorMessage, p.OffsetsSkipped = "MIRRORING", 6, strp("boom"), 5
			m := mirrormsg.NewDescribeMirrorsResponseDescribedMirror()
			m.MirrorName, m.AuthorizedOperations = "m1", 0
			m.Topics = []mirrormsg.DescribeMirrorsResponseTopicPartitions{{TopicName: "pay", Partitions: []mirrormsg.DescribeMirrorsResponsePartitionDetail{p}}}
			unknown := mirrormsg.NewDescribeMirrorsResponseDescribedMirror()
			unknown.MirrorName, unknown.ErrorCode = "nope", mirrormsg.UnknownClusterMirror.Code
			r.Mirrors = []mirrormsg.DescribeMirrorsResponseDescribedMirror{m, unknown}
			return r
		}},
		{"ReadMirrorStates", func() kmsg.Request {
			r := mirrormsg.NewPtrReadMirrorStatesRequest()
			r.MirrorName = "m1"
			r.Topics = []mirrormsg.ReadMirrorStatesRequestTopicData{{Name: "pay", Partitions: []mirrormsg.ReadMirrorStatesRequestPartitionData{{PartitionIndex: 2}, {PartitionIndex: 3}}}}
			return r
		}, func() kmsg.Response {
			r := mirrormsg.NewPtrReadMirrorStatesResponse()
			p := mirrormsg.NewReadMirrorStatesResponsePartitionResult()
			p.PartitionIndex, p.LastMirrorEpoch, p.State = 2, 9, 3
			p.LeaderEpoch, p.StateEpoch, p.LastMirrorOffset = 11, 12, 12345
			p.ErrorMessage, p.RetryAttempt, p.NonRetryable = strp("source topic recreated"), 2, true
			q := mirrormsg.NewReadMirrorStatesResponsePartitionResult()
			q.PartitionIndex, q.ErrorCode = 3, kerr.NotCoordinator.Code
			r.Topics = []mirrormsg.ReadMirrorStatesResponseTopicResult{{Name: "pay", Partitions: []mirrormsg.ReadMirrorStatesResponsePartitionResult{p, q}}}
			return r
		}},
		{"WriteMirrorStates", func() kmsg.Request {
			r := mirrormsg.NewPtrWriteMirrorStatesRequest()
			r.MirrorName = "m1"
			p := mirrormsg.NewWriteMirrorStatesRequestPartitionData()
			p.PartitionIndex, p.State, p.LeaderEpoch, p.StateEpoch = 1, 5, 8, 4
			p.LastMirrorEpoch, p.LastMirrorOffset, p.ErrorMessage, p.RetryAttempt, p.NonRetryable = 7, 999, strp("x"), 1, true
			r.Topics = []mirrormsg.WriteMirrorStatesRequestTopicMetadata{{TopicName: "pay", Partitions: []mirrormsg.WriteMirrorStatesRequestPartitionData{p}}}
			return r
		}, func() kmsg.Response {
			r := mirrormsg.NewPtrWriteMirrorStatesResponse()
			p := mirrormsg.NewWriteMirrorStatesResponsePartitionResult()
			p.PartitionIndex, p.ErrorCode, p.ErrorMessage, p.StateEpoch = 1, mirrormsg.InvalidClusterMirrorStates.Code, strp("stale state epoch"), 5
			r.Topics = []mirrormsg.WriteMirrorStatesResponseTopicResult{{TopicName: "pay", Partitions: []mirrormsg.WriteMirrorStatesResponsePartitionResult{p}}}
			return r
		}},
		{"PauseMirrorTopics", func() kmsg.Request {
			r := mirrormsg.NewPtrPauseMirrorTopicsRequest()
			r.MirrorName = "m1"
			r.Topics = []mirrormsg.PauseMirrorTopicsRequestTopicData{{TopicID: tid, TopicName: "pay"}, {TopicName: "orders"}}
			return r
		}, func() kmsg.Response {
			r := mirrormsg.NewPtrPauseMirrorTopicsResponse()
			r.MirrorName = "m1"
			r.Topics = []mirrormsg.PauseMirrorTopicsResponseTopicResult{
				{Name: "pay"},
				{Name: "orders", ErrorCode: mirrormsg.MirrorTopicAlreadyPaused.Code, ErrorMessage: strp("already paused")},
			}
			return r
		}},
		{"DeleteMirror", func() kmsg.Request {
			r := mirrormsg.NewPtrDeleteMirrorRequest()
			r.MirrorName = "m1"
			return r
		}, func() kmsg.Response {
			r := mirrormsg.NewPtrDeleteMirrorResponse()
			r.ErrorCode, r.ErrorMessage = mirrormsg.ClusterMirrorNotEmpty.Code, strp("pay is mirroring")
			return r
		}},
		{"BumpLeaderEpochs", func() kmsg.Request {
			r := mirrormsg.NewPtrBumpLeaderEpochsRequest()
			r.Topics = []mirrormsg.BumpLeaderEpochsRequestTopicState{{TopicID: tid, Partitions: []mirrormsg.BumpLeaderEpochsRequestLeaderEpochState{{PartitionIndex: 0, MinLeaderEpoch: 17}}}}
			return r
		}, func() kmsg.Response {
			r := mirrormsg.NewPtrBumpLeaderEpochsResponse()
			r.Topics = []mirrormsg.BumpLeaderEpochsResponseTopicPartitions{{TopicName: "pay", Partitions: []mirrormsg.BumpLeaderEpochsResponsePartitionDetail{{PartitionIndex: 0, ErrorCode: 0}}}}
			return r
		}},
		{"DescribeScramCredentialSecrets", func() kmsg.Request {
			r := mirrormsg.NewPtrDescribeScramCredentialSecretsRequest()
			r.Users, r.Mechanisms = []string{"alice"}, []int8{2}
			return r
		}, func() kmsg.Response {
			r := mirrormsg.NewPtrDescribeScramCredentialSecretsResponse()
			r.Credentials = []mirrormsg.DescribeScramCredentialSecretsResponseCredential{{
				Name: "alice", Mechanism: 2, Salt: []byte{1, 2, 3}, StoredKey: []byte{4}, ServerKey: []byte{5}, Iterations: 4096,
			}}
			return r
		}},
		{"SyncMirrorGroupOffsets", func() kmsg.Request {
			r := mirrormsg.NewPtrSyncMirrorGroupOffsetsRequest()
			r.MirrorName, r.Topics, r.TimeoutMs = "m1", []string{"pay"}, 2500
			return r
		}, func() kmsg.Response {
			r := mirrormsg.NewPtrSyncMirrorGroupOffsetsResponse()
			r.MirrorName, r.SyncerBrokerID, r.LastGroupSyncMs = "m1", 2, 1700000000000
			r.Groups = []mirrormsg.SyncMirrorGroupOffsetsResponseGroup{
				{GroupID: "billing", Partitions: []mirrormsg.SyncMirrorGroupOffsetsResponsePartition{
					{TopicName: "pay", PartitionIndex: 0, SourceOffset: 40, CommittedOffset: 40, Outcome: "synced"},
				}},
				{GroupID: "live", SkipReason: strp("group-active")},
			}
			return r
		}},
	}
}

// newMirrorStandIn cans every case's response.
func newMirrorStandIn(cases []mirrorCase) *mirrorStandIn {
	m := &mirrorStandIn{canned: map[int16]func() kmsg.Response{}}
	for _, c := range cases {
		m.canned[c.req().Key()] = c.resp
	}
	return m
}
