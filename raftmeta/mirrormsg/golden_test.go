package mirrormsg_test

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// The golden encodings below are written by hand from the schemas
// (testdata/schemas) and KIP-482's flexible encoding, with helpers that do
// not use kbin or the package's codec, so a bug the encoder and decoder
// share cannot hide behind a symmetric round trip. Every message is at its
// max version (v0, flexible): compact strings and arrays (length+1 as an
// unsigned varint, 0 for null) and a tagged-field section ending each
// struct (count, then tag, size, value).

func be(n int, x uint64) []byte {
	b := make([]byte, n)
	for i := n - 1; i >= 0; i-- {
		b[i] = byte(x)
		x >>= 8
	}
	return b
}

func i8(x int8) []byte   { return be(1, uint64(uint8(x))) }
func i16(x int16) []byte { return be(2, uint64(uint16(x))) }
func i32(x int32) []byte { return be(4, uint64(uint32(x))) }
func i64(x int64) []byte { return be(8, uint64(x)) }

// uv is an unsigned varint (7 bits a byte, low bits first).
func uv(x uint32) []byte {
	var b []byte
	for x >= 0x80 {
		b = append(b, byte(x)|0x80)
		x >>= 7
	}
	return append(b, byte(x))
}

func cstr(s string) []byte { return cat(uv(uint32(len(s)+1)), []byte(s)) }
func carr(n int) []byte    { return uv(uint32(n + 1)) }

var (
	null   = []byte{0} // a null compact string or array
	noTags = []byte{0} // an empty tagged-field section
)

// tag is one tagged field: tag, size, then the value's bytes.
func tag(t uint32, val []byte) []byte { return cat(uv(t), uv(uint32(len(val))), val) }

func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func sp(s string) *string { return &s }

var topicID = [16]byte{0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10}

type golden struct {
	name string
	msg  message
	want []byte
}

func goldens() []golden {
	return []golden{
		{
			name: "CreateMirrorRequest",
			msg: &mirrormsg.CreateMirrorRequest{
				MirrorName: "m1",
				Config: []mirrormsg.CreateMirrorRequestMirrorConfig{
					{Name: "bootstrap.servers", Value: sp("a:9092")},
					{Name: "x", Value: nil},
				},
			},
			want: cat(cstr("m1"), carr(2),
				cstr("bootstrap.servers"), cstr("a:9092"), noTags,
				cstr("x"), null, noTags,
				noTags),
		},
		{
			name: "StartMirrorTopicsRequest",
			msg: &mirrormsg.StartMirrorTopicsRequest{
				MirrorName:      "m",
				IncludePatterns: []string{"t1", "t.*"},
				ExcludePatterns: []string{"tx"},
				TimeoutMs:       30000,
			},
			want: cat(cstr("m"), carr(2), cstr("t1"), cstr("t.*"), i32(30000),
				uv(1), tag(0, cat(carr(1), cstr("tx")))),
		},
		{
			name: "StartMirrorTopicsRequest with resolved topics (Strait tag)",
			msg: &mirrormsg.StartMirrorTopicsRequest{
				MirrorName:      "m",
				IncludePatterns: []string{"t"},
				Topics:          []mirrormsg.StartMirrorTopicsRequestSourceTopic{{Name: "t", TopicID: topicID, NumPartitions: 3}},
			},
			want: cat(cstr("m"), carr(1), cstr("t"), i32(0),
				uv(1), tag(1, cat(carr(1), cstr("t"), topicID[:], i32(3), noTags))),
		},
		{
			name: "StartMirrorTopicsRequest without excludes",
			msg:  &mirrormsg.StartMirrorTopicsRequest{MirrorName: "m", IncludePatterns: []string{"t"}},
			want: cat(cstr("m"), carr(1), cstr("t"), i32(0), noTags),
		},
		{
			name: "StopMirrorTopicsRequest",
			msg: &mirrormsg.StopMirrorTopicsRequest{
				MirrorName:  "m",
				Topics:      []mirrormsg.StopMirrorTopicsRequestTopicMetadata{{TopicName: "t1"}},
				Patterns:    []string{"p"},
				StateOffset: 42,
				// The RPO guard's tags at their defaults are not sent.
				MaxLagMs: -1, MaxLagRecords: -1,
			},
			want: cat(cstr("m"), carr(1), cstr("t1"), noTags, i64(42),
				uv(1), tag(0, cat(carr(1), cstr("p")))),
		},
		{
			name: "StopMirrorTopicsRequest with the RPO guard",
			msg: &mirrormsg.StopMirrorTopicsRequest{
				MirrorName:  "m",
				Topics:      []mirrormsg.StopMirrorTopicsRequestTopicMetadata{{TopicName: "t1"}},
				StateOffset: -1, MaxLagMs: 5000, MaxLagRecords: 100, Force: true,
			},
			want: cat(cstr("m"), carr(1), cstr("t1"), noTags, i64(-1),
				uv(3), tag(8, i64(5000)), tag(9, i64(100)), tag(10, []byte{1})),
		},
		{
			name: "ResumeMirrorTopicsRequest",
			msg: &mirrormsg.ResumeMirrorTopicsRequest{
				MirrorName: "m",
				Topics:     []mirrormsg.ResumeMirrorTopicsRequestTopicData{{TopicID: topicID, TopicName: "t"}},
			},
			want: cat(cstr("m"), carr(1), topicID[:], cstr("t"), noTags, noTags),
		},
		{
			name: "ListMirrorsRequest",
			msg:  &mirrormsg.ListMirrorsRequest{},
			want: noTags,
		},
		{
			name: "DescribeMirrorsRequest all",
			msg:  &mirrormsg.DescribeMirrorsRequest{MirrorNames: nil},
			want: cat(null, noTags),
		},
		{
			name: "DescribeMirrorsRequest none",
			msg:  &mirrormsg.DescribeMirrorsRequest{MirrorNames: []string{}},
			want: cat(carr(0), noTags),
		},
		{
			name: "DescribeMirrorsRequest one",
			msg:  &mirrormsg.DescribeMirrorsRequest{MirrorNames: []string{"a"}},
			want: cat(carr(1), cstr("a"), noTags),
		},
		{
			name: "DescribeMirrorsRequest local only",
			msg:  &mirrormsg.DescribeMirrorsRequest{MirrorNames: []string{"a"}, LocalOnly: true},
			want: cat(carr(1), cstr("a"), uv(1), tag(0, []byte{1})),
		},
		{
			name: "ReadMirrorStatesRequest",
			msg: &mirrormsg.ReadMirrorStatesRequest{
				MirrorName: "m",
				Topics: []mirrormsg.ReadMirrorStatesRequestTopicData{{
					Name:       "t",
					Partitions: []mirrormsg.ReadMirrorStatesRequestPartitionData{{PartitionIndex: 0}, {PartitionIndex: 7}},
				}},
			},
			want: cat(cstr("m"), carr(1), cstr("t"), carr(2),
				i32(0), noTags, i32(7), noTags,
				noTags, noTags),
		},
		{
			name: "WriteMirrorStatesRequest",
			msg: &mirrormsg.WriteMirrorStatesRequest{
				MirrorName: "m",
				Topics: []mirrormsg.WriteMirrorStatesRequestTopicMetadata{{
					TopicName: "t",
					Partitions: []mirrormsg.WriteMirrorStatesRequestPartitionData{
						{PartitionIndex: 3, State: 1, LeaderEpoch: 5, StateEpoch: 2, LastMirrorEpoch: 4,
							LastMirrorOffset: 1000, ErrorMessage: nil, RetryAttempt: -1, NonRetryable: true},
						{PartitionIndex: 4, State: 6, LeaderEpoch: -1, StateEpoch: -1, LastMirrorEpoch: -1,
							LastMirrorOffset: -1, ErrorMessage: sp("boom"), RetryAttempt: 2, NonRetryable: false},
					},
				}},
			},
			want: cat(cstr("m"), carr(1), cstr("t"), carr(2),
				i32(3), i8(1), i32(5), i32(2), i32(4), i64(1000), null, i32(-1), []byte{1}, noTags,
				i32(4), i8(6), i32(-1), i32(-1), i32(-1), i64(-1), cstr("boom"), i32(2), []byte{0}, noTags,
				noTags, noTags),
		},
		{
			name: "PauseMirrorTopicsRequest",
			msg: &mirrormsg.PauseMirrorTopicsRequest{
				MirrorName: "m",
				Topics: []mirrormsg.PauseMirrorTopicsRequestTopicData{
					{TopicID: topicID, TopicName: "t"},
					{TopicName: "u"},
				},
			},
			want: cat(cstr("m"), carr(2), topicID[:], cstr("t"), noTags, make([]byte, 16), cstr("u"), noTags, noTags),
		},
		{
			name: "DeleteMirrorRequest",
			msg:  &mirrormsg.DeleteMirrorRequest{MirrorName: "mirror"},
			want: cat(cstr("mirror"), noTags),
		},
		{
			name: "BumpLeaderEpochsRequest",
			msg: &mirrormsg.BumpLeaderEpochsRequest{
				BrokerID: -1, BrokerEpoch: -1,
				Topics: []mirrormsg.BumpLeaderEpochsRequestTopicState{{
					TopicID:    topicID,
					Partitions: []mirrormsg.BumpLeaderEpochsRequestLeaderEpochState{{PartitionIndex: 0, MinLeaderEpoch: 9, LeaderEpoch: -1}},
				}},
			},
			want: cat(carr(1), topicID[:], carr(1), i32(0), i32(9), noTags, noTags, noTags),
		},
		{
			name: "BumpLeaderEpochsRequest fenced (Strait tags)",
			msg: &mirrormsg.BumpLeaderEpochsRequest{
				BrokerID: 2, BrokerEpoch: 7,
				Topics: []mirrormsg.BumpLeaderEpochsRequestTopicState{{
					TopicID:    topicID,
					Partitions: []mirrormsg.BumpLeaderEpochsRequestLeaderEpochState{{PartitionIndex: 1, MinLeaderEpoch: 9, LeaderEpoch: 3}},
				}},
			},
			want: cat(carr(1), topicID[:], carr(1), i32(1), i32(9), uv(1), tag(0, i32(3)), noTags,
				uv(2), tag(0, i32(2)), tag(1, i64(7))),
		},
		// Responses with tagged fields and nulls.
		{
			name: "CreateMirrorResponse",
			msg:  &mirrormsg.CreateMirrorResponse{ThrottleTimeMs: 5, ErrorCode: 136, ErrorMessage: sp("exists")},
			want: cat(i32(5), i16(136), cstr("exists"), noTags),
		},
		{
			name: "StartMirrorTopicsResponse",
			msg: &mirrormsg.StartMirrorTopicsResponse{
				MirrorName: "m",
				Topics: []mirrormsg.StartMirrorTopicsResponseTopicResult{
					{Name: "t", ErrorCode: 0},
					{Name: "u", ErrorCode: 138, ErrorMessage: sp("in m2")},
				},
			},
			want: cat(i32(0), i16(0), null, cstr("m"), carr(2),
				cstr("t"), i16(0), noTags,
				cstr("u"), i16(138), uv(1), tag(0, cstr("in m2")),
				noTags),
		},
		{
			name: "ListMirrorsResponse",
			msg: &mirrormsg.ListMirrorsResponse{
				Mirrors: []mirrormsg.ListMirrorsResponseListedMirror{
					{MirrorName: "m", SourceBootstrap: "h:9092", SourceClusterID: "c", TopicCount: 2},
				},
			},
			want: cat(i32(0), i16(0), null, carr(1), cstr("m"), cstr("h:9092"), cstr("c"), i32(2), noTags, noTags),
		},
		{
			name: "DescribeMirrorsResponse",
			msg: &mirrormsg.DescribeMirrorsResponse{
				Mirrors: []mirrormsg.DescribeMirrorsResponseDescribedMirror{{
					MirrorName:           "m",
					AuthorizedOperations: -2147483648,
					Topics: []mirrormsg.DescribeMirrorsResponseTopicPartitions{{
						TopicName: "t",
						Partitions: []mirrormsg.DescribeMirrorsResponsePartitionDetail{{
							PartitionIndex: 1, SourceOffset: 100, DestinationOffset: 90, Lag: 10,
							State: "MIRRORING", LastMirrorEpoch: 3, ErrorMessage: sp("boom"), OffsetsSkipped: 5,
							LagMs: 1500, RetryCount: 2, DestinationHighWatermark: 88, CommittedLag: 12, LagMeasuredAtMs: 1700000000000,
						}},
					}},
					ScramSyncError:   sp("no export"),
					FailoverMaxLagMs: 5000,
				}},
			},
			want: cat(i32(0), i16(0), null, carr(1),
				i16(0), cstr("m"), i32(-2147483648), carr(1),
				cstr("t"), carr(1),
				i32(1), i64(100), i64(90), i64(10), cstr("MIRRORING"), i32(3),
				uv(7), tag(0, cstr("boom")), tag(1, i64(5)), tag(2, i64(1500)), tag(3, i32(2)),
				tag(4, i64(88)), tag(5, i64(12)), tag(6, i64(1700000000000)),
				noTags, uv(2), tag(0, cstr("no export")), tag(8, i64(5000)), noTags),
		},
		{
			// LagMs, DestinationHighWatermark, CommittedLag and
			// LagMeasuredAtMs at their default (-1) and RetryCount 0 are not sent:
			// the v0 wire format of snapshot A.
			name: "DescribeMirrorsResponse defaults",
			msg: &mirrormsg.DescribeMirrorsResponse{
				Mirrors: []mirrormsg.DescribeMirrorsResponseDescribedMirror{{
					MirrorName:           "m",
					AuthorizedOperations: -2147483648,
					Topics: []mirrormsg.DescribeMirrorsResponseTopicPartitions{{
						TopicName: "t",
						Partitions: []mirrormsg.DescribeMirrorsResponsePartitionDetail{{
							PartitionIndex: 0, SourceOffset: -1, DestinationOffset: -1, Lag: -1,
							State: "UNKNOWN", LastMirrorEpoch: -1, LagMs: -1,
							DestinationHighWatermark: -1, CommittedLag: -1, LagMeasuredAtMs: -1,
						}},
					}},
					FailoverMaxLagMs: -1,
				}},
			},
			want: cat(i32(0), i16(0), null, carr(1),
				i16(0), cstr("m"), i32(-2147483648), carr(1),
				cstr("t"), carr(1),
				i32(0), i64(-1), i64(-1), i64(-1), cstr("UNKNOWN"), i32(-1),
				noTags,
				noTags, noTags, noTags),
		},
		{
			name: "ReadMirrorStatesResponse",
			msg: &mirrormsg.ReadMirrorStatesResponse{
				Topics: []mirrormsg.ReadMirrorStatesResponseTopicResult{{
					Name: "t",
					Partitions: []mirrormsg.ReadMirrorStatesResponsePartitionResult{
						{PartitionIndex: 0, LastMirrorEpoch: -1, State: 16, LeaderEpoch: 7, StateEpoch: 3,
							LastMirrorOffset: -1, RetryAttempt: -1, PrevState: -1},
						{PartitionIndex: 1, LastMirrorEpoch: 2, State: 6, ErrorCode: 0, LeaderEpoch: -1, StateEpoch: -1,
							LastMirrorOffset: 50, ErrorMessage: sp("x"), RetryAttempt: 1, NonRetryable: true, PrevState: 3},
					},
				}},
			},
			want: cat(i32(0), i16(0), null, carr(1), cstr("t"), carr(2),
				i32(0), i32(-1), i8(16), i16(0), uv(2), tag(0, i32(7)), tag(1, i32(3)),
				i32(1), i32(2), i8(6), i16(0), uv(5), tag(2, i64(50)), tag(3, cstr("x")), tag(4, i32(1)), tag(5, []byte{1}), tag(6, i8(3)),
				noTags, noTags),
		},
		{
			name: "WriteMirrorStatesResponse",
			msg: &mirrormsg.WriteMirrorStatesResponse{
				Topics: []mirrormsg.WriteMirrorStatesResponseTopicResult{{
					TopicName: "t",
					Partitions: []mirrormsg.WriteMirrorStatesResponsePartitionResult{
						{PartitionIndex: 2, ErrorCode: 74, ErrorMessage: sp("fenced"), StateEpoch: -1},
					},
				}},
			},
			want: cat(i32(0), i16(0), null, carr(1), cstr("t"), carr(1),
				i32(2), i16(74), cstr("fenced"), i32(-1), noTags, noTags, noTags),
		},
		{
			name: "BumpLeaderEpochsResponse",
			msg: &mirrormsg.BumpLeaderEpochsResponse{
				ErrorCode: 0,
				Topics: []mirrormsg.BumpLeaderEpochsResponseTopicPartitions{{
					TopicName:  "t",
					Partitions: []mirrormsg.BumpLeaderEpochsResponsePartitionDetail{{PartitionIndex: 0, ErrorCode: 3}},
				}},
			},
			want: cat(i32(0), i16(0), carr(1), cstr("t"), carr(1), i32(0), i16(3), noTags, noTags, noTags),
		},
		{
			name: "DescribeScramCredentialSecretsRequest",
			msg:  &mirrormsg.DescribeScramCredentialSecretsRequest{Users: []string{"alice"}, Mechanisms: nil},
			want: cat(carr(1), cstr("alice"), null, noTags),
		},
		{
			name: "DescribeScramCredentialSecretsResponse",
			msg: &mirrormsg.DescribeScramCredentialSecretsResponse{
				Credentials: []mirrormsg.DescribeScramCredentialSecretsResponseCredential{{
					Name: "alice", Mechanism: 2, Salt: []byte{1, 2}, StoredKey: []byte{3}, ServerKey: []byte{4, 5, 6}, Iterations: 4096,
				}},
			},
			// bytes are compact: length+1 as an unsigned varint, then the bytes.
			want: cat(i32(0), i16(0), null, carr(1), cstr("alice"), i8(2),
				uv(3), []byte{1, 2}, uv(2), []byte{3}, uv(4), []byte{4, 5, 6}, i32(4096), noTags, noTags),
		},
		{
			name: "SyncScramCredentialsRequest",
			msg: &mirrormsg.SyncScramCredentialsRequest{
				MirrorName: "m1",
				Upsertions: []mirrormsg.SyncScramCredentialsRequestUpsertion{{
					Name: "bob", Mechanism: 1, Salt: []byte{9}, StoredKey: []byte{8}, ServerKey: []byte{7}, Iterations: 8192,
				}},
				Deletions: []mirrormsg.SyncScramCredentialsRequestDeletion{{Name: "carol", Mechanism: 2}},
			},
			want: cat(cstr("m1"), carr(1), cstr("bob"), i8(1), uv(2), []byte{9}, uv(2), []byte{8}, uv(2), []byte{7}, i32(8192), noTags,
				carr(1), cstr("carol"), i8(2), noTags, noTags),
		},
		{
			name: "SyncScramCredentialsResponse",
			msg:  &mirrormsg.SyncScramCredentialsResponse{ErrorCode: 58, ErrorMessage: sp("no")},
			want: cat(i32(0), i16(58), cstr("no"), noTags),
		},
		{
			name: "SyncMirrorGroupOffsetsRequest",
			msg:  &mirrormsg.SyncMirrorGroupOffsetsRequest{MirrorName: "m1", Topics: []string{"t"}, TimeoutMs: 5000, LocalOnly: true},
			want: cat(cstr("m1"), carr(1), cstr("t"), i32(5000), i8(1), noTags),
		},
		{
			name: "SyncMirrorGroupOffsetsResponse",
			msg: &mirrormsg.SyncMirrorGroupOffsetsResponse{
				MirrorName: "m1", SyncerBrokerID: 2, LastGroupSyncMs: 7,
				Groups: []mirrormsg.SyncMirrorGroupOffsetsResponseGroup{{
					GroupID: "g", SkipReason: sp("group-active"),
					Partitions: []mirrormsg.SyncMirrorGroupOffsetsResponsePartition{{
						TopicName: "t", PartitionIndex: 1, SourceOffset: 10, CommittedOffset: 9, Outcome: "synced",
					}},
				}},
			},
			want: cat(i32(0), i16(0), null, cstr("m1"), i32(2), i64(7), carr(1), cstr("g"), i16(0), null, cstr("group-active"),
				carr(1), cstr("t"), i32(1), i64(10), i64(9), cstr("synced"), noTags, noTags, noTags),
		},
	}
}

// TestGolden encodes each message and compares with its hand-built bytes,
// then decodes the bytes and compares with the message.
func TestGolden(t *testing.T) {
	requests := map[int16]bool{}
	for _, g := range goldens() {
		got := g.msg.AppendTo(nil)
		if !bytes.Equal(got, g.want) {
			t.Errorf("%s: encoding\ngot  % x\nwant % x", g.name, got, g.want)
			continue
		}
		back := newLike(g.msg)
		if err := back.ReadFrom(g.want); err != nil {
			t.Errorf("%s: decode: %v", g.name, err)
			continue
		}
		if !reflect.DeepEqual(back, g.msg) {
			t.Errorf("%s: decoded\ngot  %+v\nwant %+v", g.name, back, g.msg)
		}
		if a, _ := mirrormsg.Lookup(g.msg.Key()); reflect.TypeOf(a.NewRequest()) == reflect.TypeOf(g.msg) {
			requests[g.msg.Key()] = true
		}
	}
	// At least one request per RPC.
	for _, a := range mirrormsg.APIs {
		if !requests[a.Key] {
			t.Errorf("no golden request for %s", a.Name)
		}
	}
}
