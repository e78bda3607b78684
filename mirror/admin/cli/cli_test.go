package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/mirror/admin/admintest"
	"github.com/strait-io/strait/mirror/admin/cli"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

type result struct {
	code           int
	stdout, stderr string
}

// run runs `strait mirror args...` against b (when not nil) with a 10 s
// bound on the whole command.
func run(t *testing.T, b *admintest.Broker, args ...string) result {
	t.Helper()
	if b != nil {
		args = append([]string{"--bootstrap-server", b.Addr()}, args...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	code := cli.Main(ctx, args, &out, &errb)
	return result{code, out.String(), errb.String()}
}

func (r result) expect(t *testing.T, code int, stdout, stderr string) {
	t.Helper()
	if r.code != code || r.stdout != stdout || r.stderr != stderr {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s\nwant:\n%s", r.code, code, r.stdout, stdout, r.stderr, stderr)
	}
}

func TestHelpAndCommandErrors(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		r := run(t, nil, args...)
		r.expect(t, 0, cli.Usage, "")
	}
	if r := run(t, nil); r.code != 2 || r.stdout != "" || r.stderr != "strait mirror: missing command\n\n"+cli.Usage {
		t.Fatalf("no command: %+v", r)
	}
	if r := run(t, nil, "frob"); r.code != 2 || !strings.HasPrefix(r.stderr, "strait mirror: unknown command \"frob\"\n") {
		t.Fatalf("unknown command: %+v", r)
	}
	if r := run(t, nil, "--frob", "list"); r.code != 2 || !strings.HasPrefix(r.stderr, "strait mirror: flag provided but not defined: -frob\n") {
		t.Fatalf("unknown global flag: %+v", r)
	}
	r := run(t, nil, "stop", "--help")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "usage: strait mirror stop NAME (--topic T [--topic T2]... | --all) [--json] [--barrier-timeout DURATION] [--max-lag-ms N] [--max-lag-records N] [--force] [--offset-sync-timeout DURATION] [--require-offset-sync]\n") ||
		!strings.Contains(r.stdout, "-topic TOPIC") || !strings.Contains(r.stdout, "-bootstrap-server") ||
		!strings.Contains(r.stdout, "-max-lag-ms N") || !strings.Contains(r.stdout, "-force") {
		t.Fatalf("stop --help: %+v", r)
	}
}

// TestUsageErrors: every malformed command line exits 2 naming the problem,
// and sends nothing.
func TestUsageErrors(t *testing.T) {
	b := admintest.NewBroker(t)
	for _, tc := range []struct {
		args []string
		msg  string // the first stderr line
	}{
		{[]string{"describe"}, `strait mirror describe: missing NAME`},
		{[]string{"describe", ""}, `strait mirror describe: empty NAME`},
		{[]string{"delete", "m1", "extra"}, `strait mirror delete: unexpected argument "extra"`},
		{[]string{"list", "m1"}, `strait mirror list: unexpected argument "m1"`},
		{[]string{"list", "--frob"}, `strait mirror list: flag provided but not defined: -frob`},
		{[]string{"describe", "m1", "--json=maybe"}, `strait mirror describe: invalid boolean value "maybe" for -json: parse error`},
		{[]string{"create", "m1"}, `strait mirror create: missing --source-bootstrap`},
		{[]string{"create", "m1", "--source-bootstrap", "nohost"}, `strait mirror create: --source-bootstrap: "nohost" is not HOST:PORT`},
		{[]string{"create", "m1", "--source-bootstrap", "h:99999"}, `strait mirror create: --source-bootstrap: "h:99999": bad port "99999"`},
		{[]string{"create", "m1", "--source-bootstrap", "h:1", "--config", "foo"}, `strait mirror create: invalid value "foo" for flag -config: want key=value`},
		{[]string{"create", "m1", "--source-bootstrap", "h:1", "--config", "=v"}, `strait mirror create: invalid value "=v" for flag -config: want key=value`},
		{[]string{"create", "m1", "--source-bootstrap", "h:1", "--config", "a=1", "--config", "a=2"}, `strait mirror create: invalid value "a=2" for flag -config: key "a" given twice`},
		{[]string{"create", "m1", "--source-bootstrap", "h:1", "--config", "bootstrap.servers=x:1"}, `strait mirror create: invalid value "bootstrap.servers=x:1" for flag -config: set bootstrap.servers with --source-bootstrap`},
		{[]string{"create", "--source-bootstrap", "h:1"}, `strait mirror create: missing NAME`},
		{[]string{"start", "m1"}, `strait mirror start: missing --topic`},
		{[]string{"start", "m1", "--topic", "t", "--json"}, `strait mirror start: --json goes with --dry-run`},
		{[]string{"start", "m1", "--topic", "t", "--dry-run", "--wait"}, `strait mirror start: --dry-run starts nothing to --wait for`},
		{[]string{"start", "m1", "--include", "t.*", "--dry-run"}, `strait mirror start: --dry-run and --export-truncated take --topic, not --include/--exclude`},
		{[]string{"start", "m1", "--topic", "t", "--include", "t.*", "--export-truncated", "/tmp/x"}, `strait mirror start: --dry-run and --export-truncated take --topic, not --include/--exclude`},
		{[]string{"stop", "m1", "--topic", ""}, `strait mirror stop: invalid value "" for flag -topic: empty value`},
		{[]string{"pause", "--topic", "t"}, `strait mirror pause: missing NAME`},
		{[]string{"stop", "m1"}, `strait mirror stop: missing --topic (or --all)`},
		{[]string{"stop", "m1", "--all", "--topic", "t"}, `strait mirror stop: --all and --topic exclude each other`},
		{[]string{"resume", "m1", "m2", "--topic", "t"}, `strait mirror resume: unexpected argument "m2"`},
		{[]string{"list", "--timeout", "0s"}, `strait mirror list: --timeout must be positive, got 0s`},
		{[]string{"list", "--timeout", "soon"}, `strait mirror list: invalid value "soon" for flag -timeout: parse error`},
		{[]string{"list", "--bootstrap-server", ","}, `strait mirror list: --bootstrap-server: no HOST:PORT given`},
		{[]string{"clone", "m1", "--as", "t-drill"}, `strait mirror clone: missing --topic`},
		{[]string{"clone", "m1", "--topic", "t"}, `strait mirror clone: missing --as`},
		{[]string{"clone", "m1", "--topic", "t", "--as", "t"}, `strait mirror clone: --as must name a new topic, not "t" itself`},
	} {
		r := run(t, b, tc.args...)
		first, _, _ := strings.Cut(r.stderr, "\n")
		if r.code != 2 || first != tc.msg || r.stdout != "" {
			t.Errorf("%q: exit %d, stderr %q, stdout %q; want 2, %q", tc.args, r.code, r.stderr, r.stdout, tc.msg)
		}
		if !strings.Contains(r.stderr, "\nusage: strait mirror "+tc.args[0]+" ") {
			t.Errorf("%q: stderr has no usage line: %q", tc.args, r.stderr)
		}
	}
	if n := len(b.Received()); n != 0 {
		t.Fatalf("usage errors sent %d requests", n)
	}
}

func TestCreate(t *testing.T) {
	b := admintest.NewBroker(t)
	b.Handle(mirrormsg.KeyCreateMirror, func(_ context.Context, req kmsg.Request) kmsg.Response { return req.ResponseKind() })
	// Global flag before the command, command flags before and after NAME.
	r := run(t, b, "--timeout", "5s", "create", "--config", "security.protocol=SSL", "m1",
		"--source-bootstrap", "src1:9092, src2:9092", "--config", "mirror.topics.exclude=x=y")
	r.expect(t, 0, "Created mirror m1 (source src1:9092,src2:9092).\n", "")
	req := b.Received()[0].(*mirrormsg.CreateMirrorRequest)
	got := map[string]string{}
	for _, c := range req.Config {
		got[c.Name] = *c.Value
	}
	want := map[string]string{"bootstrap.servers": "src1:9092,src2:9092", "security.protocol": "SSL", "mirror.topics.exclude": "x=y"}
	if req.MirrorName != "m1" || !reflect.DeepEqual(got, want) || len(b.Received()) != 1 {
		t.Fatalf("request %s %v, want %v", req.MirrorName, got, want)
	}
}

// topError answers every admin RPC with code and msg at the request level.
func topError(b *admintest.Broker, code int16, msg *string) {
	for _, a := range mirrormsg.APIs {
		b.Handle(a.Key, func(_ context.Context, req kmsg.Request) kmsg.Response {
			switch r := req.ResponseKind().(type) {
			case *mirrormsg.CreateMirrorResponse:
				r.ErrorCode, r.ErrorMessage = code, msg
				return r
			case *mirrormsg.DeleteMirrorResponse:
				r.ErrorCode, r.ErrorMessage = code, msg
				return r
			case *mirrormsg.ListMirrorsResponse:
				r.ErrorCode, r.ErrorMessage = code, msg
				return r
			case *mirrormsg.DescribeMirrorsResponse:
				r.ErrorCode, r.ErrorMessage = code, msg
				return r
			case *mirrormsg.StartMirrorTopicsResponse:
				r.ErrorCode, r.ErrorMessage = code, msg
				return r
			case *mirrormsg.StopMirrorTopicsResponse:
				r.ErrorCode, r.ErrorMessage = code, msg
				return r
			case *mirrormsg.PauseMirrorTopicsResponse:
				r.ErrorCode, r.ErrorMessage = code, msg
				return r
			case *mirrormsg.ResumeMirrorTopicsResponse:
				r.ErrorCode, r.ErrorMessage = code, msg
				return r
			}
			return nil
		})
	}
}

// TestRequestErrorsExitOne: every command prints the Kafka error name and
// the broker's message (or the error's description) and exits 1.
func TestRequestErrorsExitOne(t *testing.T) {
	commands := [][]string{
		{"create", "m1", "--source-bootstrap", "s:1"},
		{"delete", "m1"},
		{"list"},
		{"list", "--json"},
		{"describe", "m1"},
		{"describe", "m1", "--json"},
		{"start", "m1", "--topic", "t"},
		{"stop", "m1", "--topic", "t"},
		{"pause", "m1", "--topic", "t"},
		{"resume", "m1", "--topic", "t"},
	}
	t.Run("mirror error with message", func(t *testing.T) {
		b := admintest.NewBroker(t)
		topError(b, mirrormsg.UnknownClusterMirror.Code, kmsg.StringPtr(`mirror "m1" does not exist`))
		for _, args := range commands {
			run(t, b, args...).expect(t, 1, "", "strait mirror "+args[0]+`: UNKNOWN_CLUSTER_MIRROR: mirror "m1" does not exist`+"\n")
		}
		if n := len(b.Received()); n != len(commands) {
			t.Fatalf("received %d requests, want %d", n, len(commands))
		}
	})
	t.Run("code 136 without message", func(t *testing.T) {
		b := admintest.NewBroker(t)
		topError(b, 136, nil) // kerr: CONTROLLER_ID_NOT_REGISTERED
		for _, args := range commands {
			run(t, b, args...).expect(t, 1, "", "strait mirror "+args[0]+": CLUSTER_MIRROR_ALREADY_EXISTS: The cluster mirror already exists.\n")
		}
	})
	t.Run("standard error", func(t *testing.T) {
		b := admintest.NewBroker(t)
		topError(b, kerr.NotController.Code, nil)
		run(t, b, "delete", "m1").expect(t, 1, "", "strait mirror delete: NOT_CONTROLLER: "+kerr.NotController.Description+"\n")
	})
}

func listHandler(n int) admintest.HandlerFunc {
	return func(_ context.Context, req kmsg.Request) kmsg.Response {
		r := req.ResponseKind().(*mirrormsg.ListMirrorsResponse)
		for i, name := range []string{"west", "east"}[:n] {
			m := mirrormsg.NewListMirrorsResponseListedMirror()
			m.MirrorName, m.SourceBootstrap, m.TopicCount = name, name+"-1:9092,"+name+"-2:9092", int32(10*i)
			if name == "west" {
				m.SourceClusterID = "Wc1"
			}
			r.Mirrors = append(r.Mirrors, m)
		}
		return r
	}
}

func TestList(t *testing.T) {
	b := admintest.NewBroker(t)
	b.Handle(mirrormsg.KeyListMirrors, listHandler(2))
	run(t, b, "list").expect(t, 0, ""+
		"NAME  SOURCE-BOOTSTRAP         SOURCE-CLUSTER-ID  TOPICS\n"+
		"east  east-1:9092,east-2:9092  -                  10\n"+
		"west  west-1:9092,west-2:9092  Wc1                0\n", "")
	run(t, b, "list", "--json").expect(t, 0, `[
  {
    "name": "east",
    "source_bootstrap": "east-1:9092,east-2:9092",
    "source_cluster_id": "",
    "topic_count": 10
  },
  {
    "name": "west",
    "source_bootstrap": "west-1:9092,west-2:9092",
    "source_cluster_id": "Wc1",
    "topic_count": 0
  }
]
`, "")

	empty := admintest.NewBroker(t)
	empty.Handle(mirrormsg.KeyListMirrors, listHandler(0))
	run(t, empty, "list").expect(t, 0, "NAME  SOURCE-BOOTSTRAP  SOURCE-CLUSTER-ID  TOPICS\n", "")
	run(t, empty, "list", "--json").expect(t, 0, "[]\n", "")
}

func describeHandler(_ context.Context, req kmsg.Request) kmsg.Response {
	r := req.ResponseKind().(*mirrormsg.DescribeMirrorsResponse)
	for _, name := range req.(*mirrormsg.DescribeMirrorsRequest).MirrorNames {
		m := mirrormsg.NewDescribeMirrorsResponseDescribedMirror()
		m.MirrorName = name
		switch name {
		case "denied":
			m.ErrorCode = mirrormsg.ClusterMirrorAuthorizationFailed.Code
		case "absent": // not answered at all
			continue
		case "groups": // issue 27: what the group offset sync left alone
			for _, o := range []struct {
				group, topic, reason string
				part                 int32
				committed, source    int64
			}{{"busy", "", "group-active", -1, -1, -1}, {"live", "orders", "destination-ahead", 1, 40, 20}} {
				sk := mirrormsg.NewDescribeMirrorsResponseSkippedGroupOffset()
				sk.GroupID, sk.TopicName, sk.Reason, sk.PartitionIndex, sk.CommittedOffset, sk.SourceOffset = o.group, o.topic, o.reason, o.part, o.committed, o.source
				m.SkippedGroupOffsets = append(m.SkippedGroupOffsets, sk)
			}
		case "m1":
			for _, tn := range []string{"orders", "audit"} {
				tp := mirrormsg.NewDescribeMirrorsResponseTopicPartitions()
				tp.TopicName = tn
				for _, i := range []int32{1, 0} {
					p := mirrormsg.NewDescribeMirrorsResponsePartitionDetail()
					p.PartitionIndex, p.State = i, "MIRRORING"
					p.SourceOffset, p.DestinationOffset, p.Lag, p.LastMirrorEpoch = 1200+int64(i), 1195, 10+int64(i), 4
					// An open transaction on the source holds its LSO back.
					p.DestinationHighWatermark, p.CommittedLag, p.LagMeasuredAtMs = 1190, 4+int64(i), measuredAt.UnixMilli()
					p.LagMs = 2500 + 1000*int64(i)
					if tn == "audit" && i == 1 {
						p.State, p.ErrorMessage, p.OffsetsSkipped = "FAILED", kmsg.StringPtr("source topic id changed"), 7
						p.SourceOffset, p.DestinationOffset, p.Lag, p.LastMirrorEpoch = -1, -1, -1, -1
						p.LagMs, p.RetryCount = -1, 3
						// Unknown: the source cannot be reached since.
						p.DestinationHighWatermark, p.CommittedLag = -1, -1
						p.LagMeasuredAtMs = measuredAt.Add(-time.Minute).UnixMilli()
					}
					if tn == "orders" && i == 1 {
						p.RetryCount = -1 // a non-retryable failure's count, shown as such
					}
					tp.Partitions = append(tp.Partitions, p)
				}
				m.Topics = append(m.Topics, tp)
			}
		}
		r.Mirrors = append(r.Mirrors, m)
	}
	return r
}

// measuredAt is when describeHandler's lags were measured.
var measuredAt = time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)

func TestDescribe(t *testing.T) {
	b := admintest.NewBroker(t)
	b.Handle(mirrormsg.KeyDescribeMirrors, describeHandler)
	run(t, b, "describe", "m1").expect(t, 0, ""+
		"Mirror m1: 2 topics, 4 partitions\n"+
		"TOPIC   PARTITION  STATE      SOURCE-HW  DEST-HW  DEST-LEO  LAG      C-LAG    LAG-MS   MEASURED              LME  RETRIES   SKIPPED  ERROR\n"+
		"audit   0          MIRRORING  1200       1190     1195      10       4        2500     2026-12-06T10:00:00Z  4    0         0        -\n"+
		"audit   1          FAILED     -          -        -         unknown  unknown  unknown  2026-12-06T09:59:00Z  -    3         7        source topic id changed\n"+
		"orders  0          MIRRORING  1200       1190     1195      10       4        2500     2026-12-06T10:00:00Z  4    0         0        -\n"+
		"orders  1          MIRRORING  1201       1190     1195      11       5        3500     2026-12-06T10:00:00Z  4    no-retry  0        -\n", "")
	run(t, b, "describe", "empty").expect(t, 0, ""+
		"Mirror empty: 0 topics, 0 partitions\n"+
		"TOPIC  PARTITION  STATE  SOURCE-HW  DEST-HW  DEST-LEO  LAG  C-LAG  LAG-MS  MEASURED  LME  RETRIES  SKIPPED  ERROR\n", "")
	run(t, b, "describe", "denied").expect(t, 1, "", "strait mirror describe: CLUSTER_MIRROR_AUTHORIZATION_FAILED: Cluster mirror authorization failed.\n")
	run(t, b, "describe", "absent").expect(t, 1, "", "strait mirror describe: UNKNOWN_CLUSTER_MIRROR: The cluster mirror does not exist.\n")
	run(t, b, "describe", "absent", "--json").expect(t, 1, "", "strait mirror describe: UNKNOWN_CLUSTER_MIRROR: The cluster mirror does not exist.\n")
	for _, req := range b.Received() {
		if names := req.(*mirrormsg.DescribeMirrorsRequest).MirrorNames; len(names) != 1 {
			t.Fatalf("MirrorNames %q", names)
		}
	}
}

// TestDescribeJSON checks the --json shape exactly: the keys, their order
// and −1 kept as −1.
func TestDescribeJSON(t *testing.T) {
	b := admintest.NewBroker(t)
	b.Handle(mirrormsg.KeyDescribeMirrors, describeHandler)
	r := run(t, b, "describe", "--json", "m1")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("%+v", r)
	}
	var got struct {
		Mirror string `json:"mirror"`
		Topics []struct {
			Topic      string           `json:"topic"`
			Partitions []map[string]any `json:"partitions"`
		} `json:"topics"`
		FailoverMaxLagMs *int64 `json:"failover_max_lag_ms"`
	}
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if got.Mirror != "m1" || len(got.Topics) != 2 || got.Topics[0].Topic != "audit" || got.Topics[1].Topic != "orders" {
		t.Fatalf("%+v", got)
	}
	failed := got.Topics[0].Partitions[1]
	want := map[string]any{
		"partition": 1.0, "state": "FAILED", "source_high_watermark": -1.0, "destination_log_end_offset": -1.0,
		"lag": -1.0, "lag_ms": -1.0, "last_mirror_epoch": -1.0, "retry_count": 3.0, "offsets_skipped": 7.0,
		"last_error": "source topic id changed", "destination_high_watermark": -1.0, "lag_unknown": true,
		"committed_lag": -1.0, "lag_measured_at": "2026-12-06T09:59:00Z", "over_failover_bound": false,
	}
	if !reflect.DeepEqual(failed, want) {
		t.Fatalf("partition %v\nwant %v", failed, want)
	}
	if !strings.Contains(r.stdout, `{
      "topic": "orders",
      "partitions": [
        {
          "partition": 0,
          "state": "MIRRORING",
          "source_high_watermark": 1200,
          "destination_high_watermark": 1190,
          "destination_log_end_offset": 1195,
          "lag": 10,
          "lag_unknown": false,
          "committed_lag": 4,
          "lag_ms": 2500,
          "lag_measured_at": "2026-12-06T10:00:00Z",
          "last_mirror_epoch": 4,
          "retry_count": 0,
          "offsets_skipped": 0,
          "last_error": "",
          "over_failover_bound": false
        },`) {
		t.Fatalf("JSON layout:\n%s", r.stdout)
	}
	e := run(t, b, "describe", "empty", "--json")
	e.expect(t, 0, "{\n  \"mirror\": \"empty\",\n  \"topics\": [],\n  \"failover_max_lag_ms\": null\n}\n", "")
}

// TestDescribeSkippedGroupOffsets: describe lists what the last group
// offset sync round left alone after the partitions (issue 27), and --json
// has it as skipped_group_offsets.
func TestDescribeSkippedGroupOffsets(t *testing.T) {
	b := admintest.NewBroker(t)
	b.Handle(mirrormsg.KeyDescribeMirrors, describeHandler)
	run(t, b, "describe", "groups").expect(t, 0, ""+
		"Mirror groups: 0 topics, 0 partitions\n"+
		"TOPIC  PARTITION  STATE  SOURCE-HW  DEST-HW  DEST-LEO  LAG  C-LAG  LAG-MS  MEASURED  LME  RETRIES  SKIPPED  ERROR\n"+
		"Group offsets not synced in the last round: 2\n"+
		"GROUP  TOPIC   PARTITION  REASON             DEST-COMMITTED  SOURCE\n"+
		"busy   -       *          group-active       -               -\n"+
		"live   orders  1          destination-ahead  40              20\n", "")
	run(t, b, "describe", "groups", "--json").expect(t, 0, `{
  "mirror": "groups",
  "topics": [],
  "skipped_group_offsets": [
    {
      "group": "busy",
      "partition": -1,
      "reason": "group-active",
      "committed_offset": -1,
      "source_offset": -1
    },
    {
      "group": "live",
      "topic": "orders",
      "partition": 1,
      "reason": "destination-ahead",
      "committed_offset": 40,
      "source_offset": 20
    }
  ],
  "failover_max_lag_ms": null
}
`, "")
}

// topicsHandler answers Start/Stop/Pause/Resume: "busy" fails with fail
// (when not nil), "ghost" gets no result, the rest succeed.
func topicsHandler(fail *kerr.Error, msg *string) admintest.HandlerFunc {
	return func(_ context.Context, req kmsg.Request) kmsg.Response {
		var names []string
		switch r := req.(type) {
		case *mirrormsg.StartMirrorTopicsRequest:
			for _, p := range r.IncludePatterns {
				names = append(names, strings.ReplaceAll(strings.Trim(p, "^$"), `\.`, "."))
			}
		case *mirrormsg.StopMirrorTopicsRequest:
			for _, tm := range r.Topics {
				names = append(names, tm.TopicName)
			}
		case *mirrormsg.PauseMirrorTopicsRequest:
			for _, td := range r.Topics {
				names = append(names, td.TopicName)
			}
		case *mirrormsg.ResumeMirrorTopicsRequest:
			for _, td := range r.Topics {
				names = append(names, td.TopicName)
			}
		}
		code := func(n string) (int16, *string) {
			if n == "busy" && fail != nil {
				return fail.Code, msg
			}
			return 0, nil
		}
		resp := req.ResponseKind()
		for _, n := range names {
			if n == "ghost" {
				continue
			}
			c, m := code(n)
			switch r := resp.(type) {
			case *mirrormsg.StartMirrorTopicsResponse:
				tr := mirrormsg.NewStartMirrorTopicsResponseTopicResult()
				tr.Name, tr.ErrorCode, tr.ErrorMessage = n, c, m
				r.Topics = append(r.Topics, tr)
			case *mirrormsg.StopMirrorTopicsResponse:
				tr := mirrormsg.NewStopMirrorTopicsResponseTopicResult()
				tr.Name, tr.ErrorCode, tr.ErrorMessage = n, c, m
				r.Topics = append(r.Topics, tr)
			case *mirrormsg.PauseMirrorTopicsResponse:
				tr := mirrormsg.NewPauseMirrorTopicsResponseTopicResult()
				tr.Name, tr.ErrorCode, tr.ErrorMessage = n, c, m
				r.Topics = append(r.Topics, tr)
			case *mirrormsg.ResumeMirrorTopicsResponse:
				tr := mirrormsg.NewResumeMirrorTopicsResponseTopicResult()
				tr.Name, tr.ErrorCode, tr.ErrorMessage = n, c, m
				r.Topics = append(r.Topics, tr)
			}
		}
		return resp
	}
}

func TestTopicCommands(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		key  int16
		fail *kerr.Error
		msg  *string
	}{
		{"start", mirrormsg.KeyStartMirrorTopics, mirrormsg.TopicAlreadyInClusterMirror, kmsg.StringPtr("busy is in mirror m0")},
		{"pause", mirrormsg.KeyPauseMirrorTopics, mirrormsg.MirrorTopicBeingStopped, nil},
		{"resume", mirrormsg.KeyResumeMirrorTopics, mirrormsg.MirrorTopicNotPaused, kmsg.StringPtr("busy is MIRRORING")},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			ok := admintest.NewBroker(t)
			ok.Handle(tc.key, topicsHandler(nil, nil))
			run(t, ok, tc.cmd, "m1", "--topic", "orders", "--topic", "a.b", "--topic", "orders").expect(t, 0,
				"TOPIC   RESULT\na.b     OK\norders  OK\n", "")
			if n := len(ok.Received()); n != 1 {
				t.Fatalf("received %d requests", n)
			}
			if r, isStart := ok.Received()[0].(*mirrormsg.StartMirrorTopicsRequest); isStart {
				if !reflect.DeepEqual(r.IncludePatterns, []string{`^orders$`, `^a\.b$`}) || r.MirrorName != "m1" {
					t.Fatalf("start request %+v", r)
				}
			}

			bad := admintest.NewBroker(t)
			bad.Handle(tc.key, topicsHandler(tc.fail, tc.msg))
			detail := tc.fail.Description
			if tc.msg != nil {
				detail = *tc.msg
			}
			run(t, bad, tc.cmd, "m1", "--topic", "orders", "--topic", "busy", "--topic", "ghost").expect(t, 1,
				"TOPIC   RESULT\n"+
					"busy    "+tc.fail.Message+": "+detail+"\n"+
					"orders  OK\n"+
					"ghost   NO RESULT\n",
				"strait mirror "+tc.cmd+": topic busy: "+tc.fail.Message+": "+detail+"\n"+
					"strait mirror "+tc.cmd+": the broker returned no result for \"ghost\"\n")
		})
	}
}

func TestReadOnlyTopicIsNamedByMirrorMsg(t *testing.T) {
	b := admintest.NewBroker(t)
	b.Handle(mirrormsg.KeyPauseMirrorTopics, topicsHandler(mirrormsg.ReadOnlyTopic, nil))
	run(t, b, "pause", "m1", "--topic", "busy").expect(t, 1,
		"TOPIC  RESULT\nbusy   READ_ONLY_TOPIC: The topic is read-only.\n",
		"strait mirror pause: topic busy: READ_ONLY_TOPIC: The topic is read-only.\n")
}

func TestTimeout(t *testing.T) {
	b := admintest.NewBroker(t)
	b.Handle(mirrormsg.KeyDeleteMirror, func(ctx context.Context, _ kmsg.Request) kmsg.Response {
		<-ctx.Done() // never answers; the broker's close ends it
		return nil
	})
	start := time.Now()
	r := run(t, b, "delete", "m1", "--timeout", "300ms")
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("took %v with --timeout 300ms", d)
	}
	if r.code != 1 || r.stdout != "" || !strings.HasPrefix(r.stderr, "strait mirror delete: DeleteMirror m1: ") || !strings.HasSuffix(r.stderr, "context deadline exceeded (no answer within --timeout 300ms)\n") {
		t.Fatalf("%+v", r)
	}
}

func TestUnreachableAndOldBrokers(t *testing.T) {
	old := admintest.NewBroker(t, admintest.WithoutMirrorAPIs())
	r := run(t, old, "list")
	if r.code != 1 || r.stdout != "" || !strings.HasPrefix(r.stderr, "strait mirror list: ListMirrors: broker is too old") {
		t.Fatalf("old broker: %+v", r)
	}
	// A port nothing listens on: a closed broker's.
	gone := admintest.NewBroker(t)
	gone.Close()
	r = run(t, gone, "list", "--timeout", "2s")
	if r.code != 1 || r.stdout != "" || !strings.HasPrefix(r.stderr, "strait mirror list: ListMirrors: ") {
		t.Fatalf("unreachable broker: %+v", r)
	}
}
