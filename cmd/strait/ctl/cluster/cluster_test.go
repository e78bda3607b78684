package cluster

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/strait-io/strait/cmd/strait/ctl/ctltest"
)

func TestMain(m *testing.M) { os.Exit(ctltest.Main(m)) }

// admin is a kadm client on the target, to set up and verify.
func admin(t *testing.T, tg ctltest.Target) *kadm.Client {
	t.Helper()
	return kadm.NewClient(ctltest.KgoClient(t, tg))
}

func ctx(t *testing.T) context.Context { return ctltest.Context(t) }

func decode(t *testing.T, r ctltest.Result, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(r.Stdout), v); err != nil {
		t.Fatalf("%v\n%s", err, r)
	}
}

// TestClusterInfo: the table and --json list the cluster id, the
// controller and every broker with its address, and count the topics.
func TestClusterInfo(t *testing.T) {
	for _, tg := range ctltest.Targets(t) {
		t.Run(tg.Name, func(t *testing.T) {
			adm := admin(t, tg)
			if _, err := adm.CreateTopic(ctx(t), 3, 1, nil, "info-a"); err != nil {
				t.Fatal(err)
			}
			md, err := adm.Metadata(ctx(t))
			if err != nil {
				t.Fatal(err)
			}
			b := md.Brokers[0]
			var info clusterInfo
			decode(t, ctltest.Must(t, tg, "", "cluster", "info", "--json"), &info)
			if info.ClusterID != md.Cluster || info.Controller != md.Controller || len(info.Brokers) != 1 ||
				info.Brokers[0].ID != b.NodeID || info.Brokers[0].Host != b.Host || info.Brokers[0].Port != b.Port {
				t.Fatalf("info %+v, metadata %+v", info, md)
			}
			if info.Topics < 1 || info.Partitions < 3 {
				t.Fatalf("counts %+v, want the 3-partition topic counted", info)
			}
			r := ctltest.Must(t, tg, "", "cluster", "info")
			for _, want := range []string{"CLUSTER", md.Cluster, "CONTROLLER", "ID", "HOST", "PORT", "RACK",
				strconv.Itoa(int(b.Port)), strconv.Itoa(int(b.NodeID)) + "*"} {
				if !strings.Contains(r.Stdout, want) {
					t.Fatalf("table lacks %q\n%s", want, r)
				}
			}
		})
	}
}

// TestClusterHealth: healthy exits 0; a topic with min.insync.replicas
// above its replicas makes the cluster unhealthy (exit 1, the partitions
// named, in the table and --json).
func TestClusterHealth(t *testing.T) {
	for _, tg := range ctltest.Targets(t) {
		t.Run(tg.Name, func(t *testing.T) {
			adm := admin(t, tg)
			if _, err := adm.CreateTopic(ctx(t), 1, 1, nil, "health-ok"); err != nil {
				t.Fatal(err)
			}
			r := ctltest.Must(t, tg, "", "cluster", "health")
			if !strings.Contains(r.Stdout, "HEALTHY") || !strings.Contains(r.Stdout, "true") {
				t.Fatalf("%s", r)
			}
			var h health
			decode(t, ctltest.Must(t, tg, "", "cluster", "health", "--json"), &h)
			if !h.Healthy || len(h.UnhealthyReasons) != 0 || !h.MinISRChecked || len(h.Brokers) != 1 {
				t.Fatalf("%+v", h)
			}

			two := "2"
			if _, err := adm.CreateTopic(ctx(t), 2, 1, map[string]*string{"min.insync.replicas": &two}, "health-minisr"); err != nil {
				t.Fatal(err)
			}
			r = ctltest.Run(t, tg, "", "cluster", "health", "--json")
			if r.Code != 1 {
				t.Fatalf("want exit 1 when unhealthy\n%s", r)
			}
			h = health{}
			decode(t, r, &h)
			if h.Healthy || strings.Join(h.UnhealthyReasons, ",") != "under_min_isr_partitions" ||
				strings.Join(h.UnderMinISR, ",") != "health-minisr/0,health-minisr/1" {
				t.Fatalf("%+v", h)
			}
			r = ctltest.Run(t, tg, "", "cluster", "health")
			if r.Code != 1 || !containsFields(r.Stdout, "UNDER-MIN-ISR", "PARTITIONS", "(2)", "[health-minisr/0", "health-minisr/1]") ||
				!strings.Contains(r.Stdout, "under_min_isr_partitions") {
				t.Fatalf("%s", r)
			}
			// --wait gives up at --timeout with the last report.
			r = ctltest.Run(t, tg, "", "cluster", "health", "--wait", "--timeout", "2s")
			if r.Code != 1 || !containsFields(r.Stdout, "HEALTHY", "false") || r.Stderr != "" {
				t.Fatalf("%s", r)
			}
		})
	}
}

// TestClusterConfig: set on the cluster-wide default (resource name "") and on one
// broker, read back through the binary and kadm, ls, delete.
func TestClusterConfig(t *testing.T) {
	for _, tg := range ctltest.Targets(t) {
		t.Run(tg.Name, func(t *testing.T) {
			adm := admin(t, tg)
			md, err := adm.Metadata(ctx(t))
			if err != nil {
				t.Fatal(err)
			}
			id := strconv.Itoa(int(md.Brokers[0].NodeID))

			r := ctltest.Must(t, tg, "", "cluster", "config", "set", "log.retention.ms", "7200000")
			if !strings.Contains(r.Stdout, "set log.retention.ms=7200000 on the cluster-wide default") {
				t.Fatalf("%s", r)
			}
			rcs, err := adm.DescribeBrokerConfigs(ctx(t))
			if err != nil || len(rcs) != 1 {
				t.Fatal(rcs, err)
			}
			if v := value(rcs[0], "log.retention.ms"); v != "7200000" {
				t.Fatalf("cluster default log.retention.ms %q", v)
			}
			if r := ctltest.Must(t, tg, "", "cluster", "config", "get", "log.retention.ms"); r.Stdout != "7200000\n" {
				t.Fatalf("%s", r)
			}

			ctltest.Must(t, tg, "", "cluster", "config", "set", "log.retention.ms", "3600000", "--broker", id)
			rcs, err = adm.DescribeBrokerConfigs(ctx(t), md.Brokers[0].NodeID)
			if err != nil || len(rcs) != 1 {
				t.Fatal(rcs, err)
			}
			if v := value(rcs[0], "log.retention.ms"); v != "3600000" {
				t.Fatalf("broker %s log.retention.ms %q", id, v)
			}
			var e configEntry
			decode(t, ctltest.Must(t, tg, "", "cluster", "config", "get", "log.retention.ms", "--broker", id, "--json"), &e)
			if e.Broker != id || e.Key != "log.retention.ms" || e.Value == nil || *e.Value != "3600000" ||
				e.Source != "DYNAMIC_BROKER_CONFIG" {
				t.Fatalf("%+v", e)
			}
			r = ctltest.Must(t, tg, "", "cluster", "config", "ls", "--broker", id)
			if !strings.Contains(r.Stdout, "KEY") || !strings.Contains(r.Stdout, "SOURCE") ||
				!containsFields(r.Stdout, "log.retention.ms", "3600000", "DYNAMIC_BROKER_CONFIG") {
				t.Fatalf("%s", r)
			}
			// kfake keeps one config set for the cluster and its broker, so the
			// cluster-wide value is whatever the cluster answers to kadm.
			rcs, err = adm.DescribeBrokerConfigs(ctx(t))
			if err != nil || len(rcs) != 1 {
				t.Fatal(rcs, err)
			}
			var all []configEntry
			decode(t, ctltest.Must(t, tg, "", "cluster", "config", "ls", "--json"), &all)
			if len(all) != len(rcs[0].Configs) || !hasEntry(all, "log.retention.ms", value(rcs[0], "log.retention.ms")) {
				t.Fatalf("cluster-wide ls: %+v, kadm %+v", all, rcs)
			}

			ctltest.Must(t, tg, "", "cluster", "config", "delete", "log.retention.ms", "--broker", id)
			ctltest.Must(t, tg, "", "cluster", "config", "delete", "log.retention.ms")
			rcs, err = adm.DescribeBrokerConfigs(ctx(t))
			if err != nil || len(rcs) != 1 || source(rcs[0], "log.retention.ms") == "DYNAMIC_DEFAULT_BROKER_CONFIG" ||
				source(rcs[0], "log.retention.ms") == "DYNAMIC_BROKER_CONFIG" {
				t.Fatalf("after delete: %+v %v", rcs, err)
			}
			if tg.Name == "kfake" {
				return // kfake answers the cluster-wide resource with every key, set or not
			}
			// No cluster-wide default: the value in force is a broker's,
			// alone on stdout for scripts, where it came from on stderr.
			r = ctltest.Run(t, tg, "", "cluster", "config", "get", "log.retention.hours")
			if r.Code != 0 || r.Stdout != "168\n" || !strings.Contains(r.Stderr, "no cluster-wide default of log.retention.hours is set; broker "+id+"'s value") {
				t.Fatalf("%s", r)
			}
		})
	}
}

// TestClusterErrors: a bad flag or argument is a usage error (exit 2), an
// unreachable cluster and a Kafka error one line and exit 1.
func TestClusterErrors(t *testing.T) {
	tg := ctltest.Strait(t)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"cluster", "info", "--bogus"}, 2, "flag provided but not defined: -bogus"},
		{[]string{"cluster", "config", "frob"}, 2, `unknown config command "frob"`},
		{[]string{"cluster", "config", "set", "log.retention.ms"}, 2, "config set takes 2 argument(s)"},
		{[]string{"cluster", "config", "get", "x", "--broker", "-5"}, 2, "--broker must be a broker id"},
		{[]string{"cluster", "config", "set", "log.retention.ms", "soon"}, 1, "INVALID_CONFIG"},
		{[]string{"cluster", "config", "set", "no.such.key", "1"}, 1, "INVALID_REQUEST: Cannot update these configs dynamically: no.such.key"},
		{[]string{"cluster", "config", "get", "x", "--broker", "7"}, 1, "broker 7 is not in the cluster (brokers [1])"},
	} {
		r := ctltest.Run(t, tg, "", c.args...)
		if r.Code != c.code || !strings.Contains(r.Stderr, c.want) || !strings.HasPrefix(r.Stderr, "strait cluster") {
			t.Errorf("want exit %d and %q\n%s", c.code, c.want, r)
		}
	}
	for _, sub := range [][]string{{"info"}, {"health"}, {"health", "--wait"}, {"config", "ls"}} {
		args := append(append([]string{"cluster"}, sub...), "--timeout", "3s")
		r := ctltest.Run(t, ctltest.Target{Brokers: "127.0.0.1:1"}, "", args...)
		if r.Code != 1 || strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, "127.0.0.1:1") {
			t.Errorf("unreachable: %s", r)
		}
	}
}

// TestClusterHelp: --help of the group and of a command shows the
// examples, exit 0.
func TestClusterHelp(t *testing.T) {
	for _, args := range [][]string{{"cluster", "--help"}, {"cluster", "config", "--help"}} {
		r := ctltest.Run(t, ctltest.Target{}, "", args...)
		if r.Code != 0 || !strings.Contains(r.Stdout, "strait cluster config set log.retention.ms") {
			t.Errorf("%s", r)
		}
	}
}

func value(rc kadm.ResourceConfig, key string) string {
	for _, c := range rc.Configs {
		if c.Key == key {
			return c.MaybeValue()
		}
	}
	return ""
}

func source(rc kadm.ResourceConfig, key string) string {
	for _, c := range rc.Configs {
		if c.Key == key {
			return c.Source.String()
		}
	}
	return ""
}

func hasEntry(es []configEntry, key, val string) bool {
	for _, e := range es {
		if e.Key == key && e.Value != nil && *e.Value == val {
			return true
		}
	}
	return false
}

// containsFields: some line of out has exactly these fields.
func containsFields(out string, fields ...string) bool {
	for _, l := range strings.Split(out, "\n") {
		if strings.Join(strings.Fields(l), " ") == strings.Join(fields, " ") {
			return true
		}
	}
	return false
}
