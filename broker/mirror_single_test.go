package broker_test

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/broker/brokertest/faultnet"
	"github.com/strait-io/strait/mirror/admin"
	"github.com/strait-io/strait/mirror/partition"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// mirrorPartitionsSeries matches strait_mirror_partitions of mirror m.
var mirrorPartitionsSeries = regexp.MustCompile(`(?m)^strait_mirror_partitions\{mirror="m",state="([A-Z_]+)"\} (\S+)$`)

// TestMirrorSingleNode drives the mirror RPCs of a one-node destination
// against a one-node source: the admin client's flow, pattern resolution
// against the source, the __mirror_state RPCs with their fencing and the
// MirrorName "" resolution, and DeleteMirror removing the mirror's
// records.
func TestMirrorSingleNode(t *testing.T) {
	ctx := testCtx(t, 40*time.Second)
	src := brokertest.Start(t)
	ids := sourceTopicIDs(ctx, t, src.Admin(t), map[string]int32{"orders": 3, "payments": 2, "audit": 1})
	srcCl := src.Client(t)
	for i := range 10 {
		produceSync(t, srcCl, &kgo.Record{Topic: "orders", Value: []byte(fmt.Sprint("v", i))})
	}
	dst := brokertest.Start(t, brokertest.WithConfig("mirror.state.topic.num.partitions=3"), brokertest.WithMetrics())
	cl := dst.Client(t, mirrorOpt)
	adm := admin.Wrap(cl)
	createTopic(t, dst.Admin(t), "plain", 2)
	const self = 1

	runSubtests(t, []subtest{
		{"CreateAndList", func(t *testing.T) {
			if err := adm.CreateMirror(ctx, "m", map[string]string{"bootstrap.servers": src.Addr()}); err != nil {
				t.Fatalf("CreateMirror: %v", err)
			}
			if err := adm.CreateMirror(ctx, "m", map[string]string{"bootstrap.servers": src.Addr()}); !errors.Is(err, mirrormsg.ClusterMirrorAlreadyExists) {
				t.Fatalf("CreateMirror again: %v, want CLUSTER_MIRROR_ALREADY_EXISTS", err)
			}
			ms, err := adm.ListMirrors(ctx)
			if err != nil || len(ms) != 1 || ms[0].Name != "m" || ms[0].SourceBootstrap != src.Addr() || ms[0].TopicCount != 0 {
				t.Fatalf("ListMirrors = %+v, %v", ms, err)
			}
		}},
		{"StartNamed", func(t *testing.T) {
			rs, err := adm.StartMirrorTopics(ctx, "m", "orders", "missing")
			if err != nil {
				t.Fatalf("StartMirrorTopics: %v", err)
			}
			if len(rs) != 2 || rs[0].Topic != "missing" || !errors.Is(rs[0].Err, kerr.UnknownTopicOrPartition) || rs[1].Topic != "orders" || rs[1].Err != nil {
				t.Fatalf("results %+v", rs)
			}
			checkMirrorTopic(t, dst.Node().Image(), "orders", ids["orders"], 3, "m")
		}},
		{"StartPatterns", func(t *testing.T) {
			req := mirrormsg.NewPtrStartMirrorTopicsRequest()
			req.MirrorName, req.TimeoutMs = "m", 10000
			req.IncludePatterns = []string{"pay.*|aud.*", "__.*"}
			req.ExcludePatterns = []string{"audit"}
			resp := brokerRequest[*mirrormsg.StartMirrorTopicsResponse](ctx, t, cl, self, req)
			if resp.ErrorCode != 0 || !slices.Equal(startTopicsResult(resp), []string{"payments:"}) {
				t.Fatalf("answer %s %v", errName(resp.ErrorCode), startTopicsResult(resp))
			}
			img := dst.Node().Image()
			checkMirrorTopic(t, img, "payments", ids["payments"], 2, "m")
			if _, ok := img.Topics["audit"]; ok {
				t.Fatal("audit was excluded but created")
			}
			// A named topic that is excluded gets its own error.
			req.IncludePatterns = []string{"^audit$"}
			resp = brokerRequest[*mirrormsg.StartMirrorTopicsResponse](ctx, t, cl, self, req)
			if resp.ErrorCode != 0 || !slices.Equal(startTopicsResult(resp), []string{"audit:INVALID_REQUEST"}) {
				t.Fatalf("excluded name: %s %v", errName(resp.ErrorCode), startTopicsResult(resp))
			}
			for _, c := range []struct{ pattern, want string }{
				{"nothing.*", "INVALID_REQUEST"}, // matches no source topic
				{"(", "INVALID_REQUEST"},         // not a regex
			} {
				req.IncludePatterns, req.ExcludePatterns = []string{c.pattern}, nil
				resp = brokerRequest[*mirrormsg.StartMirrorTopicsResponse](ctx, t, cl, self, req)
				if errName(resp.ErrorCode) != c.want || resp.ErrorMessage == nil || len(resp.Topics) != 0 {
					t.Fatalf("pattern %q: %s %v", c.pattern, errName(resp.ErrorCode), resp.Topics)
				}
			}
			req.MirrorName, req.IncludePatterns = "nope", []string{"orders"}
			if resp = brokerRequest[*mirrormsg.StartMirrorTopicsResponse](ctx, t, cl, self, req); errName(resp.ErrorCode) != "UNKNOWN_CLUSTER_MIRROR" {
				t.Fatalf("unknown mirror: %s", errName(resp.ErrorCode))
			}
			if ms, err := adm.ListMirrors(ctx); err != nil || len(ms) != 1 || ms[0].TopicCount != 2 {
				t.Fatalf("ListMirrors = %+v, %v", ms, err)
			}
		}},
		{"UnreachableSource", func(t *testing.T) {
			if err := adm.CreateMirror(ctx, "dead", map[string]string{"bootstrap.servers": faultnet.RefusedAddr(t)}); err != nil {
				t.Fatalf("CreateMirror: %v", err)
			}
			req := mirrormsg.NewPtrStartMirrorTopicsRequest()
			req.MirrorName, req.TimeoutMs, req.IncludePatterns = "dead", 1000, []string{"^orders$"}
			start := time.Now()
			resp := brokerRequest[*mirrormsg.StartMirrorTopicsResponse](ctx, t, cl, self, req)
			if errName(resp.ErrorCode) != "BROKER_NOT_AVAILABLE" || resp.ErrorMessage == nil || len(resp.Topics) != 0 {
				t.Fatalf("answer %s %v %+v", errName(resp.ErrorCode), resp.ErrorMessage, resp.Topics)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Fatalf("took %v with TimeoutMs 1000", took)
			}
			if err := adm.DeleteMirror(ctx, "dead"); err != nil {
				t.Fatalf("DeleteMirror: %v", err)
			}
		}},
		{"Describe", func(t *testing.T) {
			ds, err := adm.DescribeMirrors(ctx, "m", "nope")
			if err != nil || len(ds) != 2 {
				t.Fatalf("DescribeMirrors = %+v, %v", ds, err)
			}
			if !errors.Is(ds[1].Err, mirrormsg.UnknownClusterMirror) {
				t.Fatalf("nope: %v", ds[1].Err)
			}
			m := ds[0]
			if m.Err != nil || len(m.Topics) != 2 || m.Topics[0].Name != "orders" || len(m.Topics[0].Partitions) != 3 ||
				m.Topics[1].Name != "payments" || len(m.Topics[1].Partitions) != 2 {
				t.Fatalf("m = %+v", m)
			}
			for _, td := range m.Topics {
				for i, p := range td.Partitions {
					if p.Partition != int32(i) || p.State == "" {
						t.Fatalf("%s partition %d: %+v", td.Name, i, p)
					}
				}
			}
		}},
		{"Metrics", func(t *testing.T) {
			// The five partitions this broker leads are counted by state,
			// and the ten source records are mirrored.
			waitUntil(t, 15*time.Second, "5 partitions of m counted and 10 records mirrored", func() bool {
				body := scrape(t, dst)
				total := 0.0
				for _, m := range mirrorPartitionsSeries.FindAllSubmatch(body, -1) {
					v, _ := strconv.ParseFloat(string(m[2]), 64)
					total += v
				}
				records, _ := metricValue(t, body, `strait_mirror_records_total{mirror="m"}`)
				lag, lagOK := metricValue(t, body, `strait_mirror_lag_records{mirror="m"}`)
				_, bytesOK := metricValue(t, body, `strait_mirror_bytes_total{mirror="m"}`)
				_, errsOK := metricValue(t, body, `strait_mirror_fetch_errors_total{mirror="m"}`)
				_, skippedOK := metricValue(t, body, `strait_mirror_offsets_skipped_total{mirror="m"}`)
				lagMs, lagMsOK := metricValue(t, body, `strait_mirror_lag_ms{mirror="m"}`)
				return total == 5 && records == 10 && lagOK && lag == 0 && bytesOK && errsOK && skippedOK && lagMsOK && lagMs == 0
			})
		}},
		{"StatesRoundTrip", func(t *testing.T) {
			epoch := dst.Node().Image().Topics["plain"].Partitions[0].LeaderEpoch
			if got := writeState(ctx, t, cl, self, "m", "plain", 0, preparing(epoch), 0); got.ErrorCode != 0 || got.StateEpoch != 1 {
				t.Fatalf("write: %s se=%d", errName(got.ErrorCode), got.StateEpoch)
			}
			got := readState(ctx, t, cl, self, "m", "plain", 0)
			if got.ErrorCode != 0 || got.State != int8(partition.StatePreparing) || got.StateEpoch != 1 || got.LeaderEpoch != epoch {
				t.Fatalf("read: %+v", got)
			}
			// Fencing: a stale expected state epoch, a leader epoch the
			// metadata has not got (a stale one: BumpLeaderEpochs below).
			for _, c := range []struct {
				leaderEpoch, expected int32
				want                  string
			}{
				{epoch, 0, "INVALID_CLUSTER_MIRROR_STATES"},
				{epoch + 1, 1, "UNKNOWN_LEADER_EPOCH"},
			} {
				if got := writeState(ctx, t, cl, self, "m", "plain", 0, preparing(c.leaderEpoch), c.expected); errName(got.ErrorCode) != c.want || got.StateEpoch != -1 {
					t.Fatalf("write le=%d se=%d: %s se=%d, want %s", c.leaderEpoch, c.expected, errName(got.ErrorCode), got.StateEpoch, c.want)
				}
			}
			// MirrorName "": plain is in no mirror, so no record, whatever
			// "m" holds for it.
			if got := readState(ctx, t, cl, self, "", "plain", 0); got.ErrorCode != 0 || got.State != -1 || got.StateEpoch != -1 {
				t.Fatalf("read plain via mirror.name: %+v", got)
			}
		}},
		{"BumpLeaderEpochs", func(t *testing.T) {
			testBumpLeaderEpochs(ctx, t, cl, func() []*raftmeta.Image { return []*raftmeta.Image{dst.Node().Image()} }, self)
		}},
		{"ReadByMirrorName", func(t *testing.T) {
			// orders is in m: "" reads m's records. The manager writes them
			// meanwhile, so compare until both answers agree.
			for p := int32(0); p < 3; p++ {
				waitUntil(t, 10*time.Second, "the same record under \"\" and \"m\"", func() bool {
					a := readState(ctx, t, cl, self, "m", "orders", p)
					b := readState(ctx, t, cl, self, "", "orders", p)
					return a.ErrorCode == 0 && b.ErrorCode == 0 && a.State == b.State && a.StateEpoch == b.StateEpoch && a.LeaderEpoch == b.LeaderEpoch
				})
			}
		}},
		{"StopAndDelete", func(t *testing.T) {
			if err := adm.DeleteMirror(ctx, "m"); !errors.Is(err, mirrormsg.ClusterMirrorNotEmpty) {
				t.Fatalf("DeleteMirror of a busy mirror: %v", err)
			}
			rs, err := adm.StopMirrorTopics(ctx, "m", "orders", "payments")
			if err != nil || len(rs.Failed()) != 0 {
				t.Fatalf("StopMirrorTopics = %+v, %v", rs, err)
			}
			// Refused while a partition has not finished its stop.
			waitUntil(t, 15*time.Second, "DeleteMirror accepted", func() bool {
				err := adm.DeleteMirror(ctx, "m")
				if err != nil && !errors.Is(err, mirrormsg.ClusterMirrorNotEmpty) {
					t.Fatalf("DeleteMirror: %v", err)
				}
				return err == nil
			})
			if ms, err := adm.ListMirrors(ctx); err != nil || len(ms) != 0 {
				t.Fatalf("ListMirrors = %+v, %v", ms, err)
			}
			// Its records go with it, from the coordinator's memory and
			// (tombstones) from the log.
			waitUntil(t, 10*time.Second, "m's records deleted", func() bool {
				got := readState(ctx, t, cl, self, "m", "plain", 0)
				return got.ErrorCode == 0 && got.State == -1 && got.StateEpoch == -1
			})
			// ... except those of its stopped topics, which still carry
			// "m.removed": their next leaders must find them STOPPED (and a
			// failback needs their LME).
			if got := readState(ctx, t, cl, self, "m", "orders", 0); got.ErrorCode != 0 || got.State != 7 {
				t.Fatalf("record of stopped orders-0 after DeleteMirror: %+v, want STOPPED (7) kept", got)
			}
		}},
	})
}
