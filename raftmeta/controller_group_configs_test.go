package raftmeta

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var groupT = kmsg.ConfigResourceTypeGroupConfig

// groupValidator stands in for the broker's (configdef's) GROUP validation:
// it knows two keys and records what it saw.
type groupValidator struct{ seen []string }

func (v *groupValidator) validate(res ConfigResource, configs map[string]*string) error {
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(configs)) {
		kv = append(kv, k+"="+deref(configs[k]))
	}
	v.seen = append(v.seen, fmt.Sprintf("%d/%s: %s", res.Type, res.Name, strings.Join(kv, " ")))
	for k, val := range configs {
		switch k {
		case "consumer.session.timeout.ms", "share.auto.offset.reset":
		default:
			return fmt.Errorf("Unknown group config name: %s", k)
		}
		if *val == "0" {
			return fmt.Errorf("Invalid value 0 for configuration %s: Value must be at least 1", k)
		}
	}
	return nil
}

// TestGroupConfigs: the GROUP resource (type 32) is stored as the other
// config resources are, for a group that does not exist yet, through both
// alter APIs, with Kafka's errors.
func TestGroupConfigs(t *testing.T) {
	v := &groupValidator{}
	c, log := newTestController(t, Config{ConfigValidator: v.validate}, 1)
	ctx := context.Background()

	steps := []struct {
		ops  []op
		want string
	}{
		{[]op{{"share.auto.offset.reset", set, s("earliest")}, {"consumer.session.timeout.ms", set, s("50000")}},
			"consumer.session.timeout.ms=50000 share.auto.offset.reset=earliest"},
		{[]op{{"consumer.session.timeout.ms", del, nil}}, "share.auto.offset.reset=earliest"},
		// Deleting an unset key is fine.
		{[]op{{"consumer.session.timeout.ms", del, nil}}, "share.auto.offset.reset=earliest"},
	}
	for i, st := range steps {
		resp := c.IncrementalAlterConfigs(ctx, incReq(false, incRes(groupT, "no-such-group", st.ops...)))
		if r := resp.Resources[0]; r.ErrorCode != 0 || r.ResourceType != groupT || r.ResourceName != "no-such-group" {
			t.Fatalf("step %d: %+v %s", i, r, deref(r.ErrorMessage))
		}
		if got := configsOf(log.Image(), ConfigResourceGroup, "no-such-group"); got != st.want {
			t.Fatalf("step %d: configs %q, want %q", i, got, st.want)
		}
	}
	// The validator sees the group's configs as the alter leaves them.
	if want := "32/no-such-group: consumer.session.timeout.ms=50000 share.auto.offset.reset=earliest"; !slices.Contains(v.seen, want) {
		t.Fatalf("validator saw %q", v.seen)
	}
	if got := log.Image().GroupConfig("no-such-group"); got["share.auto.offset.reset"] != "earliest" {
		t.Fatalf("Image.GroupConfig = %v", got)
	}

	// ValidateOnly checks and writes nothing.
	before := log.Image()
	resp := c.IncrementalAlterConfigs(ctx, incReq(true, incRes(groupT, "g2", op{"share.auto.offset.reset", set, s("latest")})))
	if resp.Resources[0].ErrorCode != 0 || log.Image() != before {
		t.Fatalf("validate only: %s, image changed %v", codeName(resp.Resources[0].ErrorCode), log.Image() != before)
	}

	// The legacy AlterConfigs replaces a group's whole set.
	ar := c.AlterConfigs(ctx, alterReq(false, alterRes(groupT, "no-such-group", s("consumer.session.timeout.ms"), s("46000"))))
	if r := ar.Resources[0]; r.ErrorCode != 0 {
		t.Fatalf("alter: %s %s", codeName(r.ErrorCode), deref(r.ErrorMessage))
	}
	if got := configsOf(log.Image(), ConfigResourceGroup, "no-such-group"); got != "consumer.session.timeout.ms=46000" {
		t.Fatalf("after AlterConfigs: %q", got)
	}

	for _, tc := range []struct {
		name string
		res  kmsg.IncrementalAlterConfigsRequestResource
		code *kerr.Error
		msg  string
	}{
		{"default group", incRes(groupT, "", op{"share.auto.offset.reset", set, s("earliest")}), kerr.InvalidRequest, "Default group resources are not allowed."},
		{"unknown key", incRes(groupT, "g", op{"share.nope", set, s("1")}), kerr.InvalidConfig, "Unknown group config name: share.nope"},
		{"bad value", incRes(groupT, "g", op{"consumer.session.timeout.ms", set, s("0")}), kerr.InvalidConfig, "Invalid value 0 for configuration consumer.session.timeout.ms"},
		{"append", incRes(groupT, "g", op{"share.auto.offset.reset", appendOp, s("earliest")}), kerr.InvalidConfig, "Can't APPEND to key share.auto.offset.reset because its type is not LIST."},
		{"subtract", incRes(groupT, "g", op{"consumer.session.timeout.ms", subtract, s("1")}), kerr.InvalidConfig, "Can't SUBTRACT to key consumer.session.timeout.ms because its type is not LIST."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := log.Image()
			r := c.IncrementalAlterConfigs(ctx, incReq(false, tc.res)).Resources[0]
			if r.ErrorCode != tc.code.Code || !strings.Contains(deref(r.ErrorMessage), tc.msg) {
				t.Fatalf("got %s %q, want %s %q", codeName(r.ErrorCode), deref(r.ErrorMessage), tc.code.Message, tc.msg)
			}
			if log.Image() != before {
				t.Fatal("a failed alter changed the image")
			}
		})
	}
	r := c.AlterConfigs(ctx, alterReq(false, alterRes(groupT, "", s("consumer.session.timeout.ms"), s("46000")))).Resources[0]
	if r.ErrorCode != kerr.InvalidRequest.Code || deref(r.ErrorMessage) != "Default group resources are not allowed." {
		t.Fatalf("legacy alter of the default group: %s %q", codeName(r.ErrorCode), deref(r.ErrorMessage))
	}
}

// TestQuorumKeepsGroupConfigs: group configs are ConfigRecords in the
// metadata log, so a restarted quorum has them, replayed from the log and
// restored from a snapshot.
func TestQuorumKeepsGroupConfigs(t *testing.T) {
	cfg := Config{NodeID: 1, Dir: t.TempDir(), BindAddr: "127.0.0.1:0", ConfigValidator: (&groupValidator{}).validate}
	ctx := context.Background()
	alter := func(q *Quorum, group string, ops ...op) {
		t.Helper()
		r := q.Controller().IncrementalAlterConfigs(ctx, incReq(false, incRes(groupT, group, ops...))).Resources[0]
		if r.ErrorCode != 0 {
			t.Fatalf("alter %s: %s %s", group, codeName(r.ErrorCode), deref(r.ErrorMessage))
		}
	}
	reopen := func(q *Quorum) *Quorum {
		t.Helper()
		if err := q.Close(); err != nil {
			t.Fatal(err)
		}
		q = openQuorum(t, cfg)
		startQuorum(t, q)
		return q
	}

	q := openQuorum(t, cfg)
	startQuorum(t, q)
	if err := q.Controller().RegisterBroker(ctx, Broker{ID: 1}); err != nil {
		t.Fatal(err)
	}
	alter(q, "g1", op{"share.auto.offset.reset", set, s("earliest")}, op{"consumer.session.timeout.ms", set, s("50000")})
	alter(q, "g2", op{"share.auto.offset.reset", set, s("latest")})
	alter(q, "g2", op{"share.auto.offset.reset", del, nil})
	img := q.Image()

	q = reopen(q) // replayed from the log
	if !reflect.DeepEqual(q.Image(), img) {
		t.Fatalf("replayed image differs:\n%s\nwant\n%s", formatImage(q.Image()), formatImage(img))
	}
	if got := configsOf(q.Image(), ConfigResourceGroup, "g1"); got != "consumer.session.timeout.ms=50000 share.auto.offset.reset=earliest" {
		t.Fatalf("g1 after replay: %q", got)
	}
	if _, ok := q.Image().Configs[ConfigResource{Type: ConfigResourceGroup, Name: "g2"}]; ok {
		t.Fatal("g2's deleted config came back")
	}

	if err := q.raft.Load().Snapshot().Error(); err != nil {
		t.Fatal(err)
	}
	alter(q, "g3", op{"consumer.session.timeout.ms", set, s("47000")})
	img = q.Image()
	q = reopen(q) // restored from the snapshot, then g3 replayed
	if !reflect.DeepEqual(q.Image(), img) {
		t.Fatalf("restored image differs:\n%s\nwant\n%s", formatImage(q.Image()), formatImage(img))
	}
	for group, want := range map[string]string{
		"g1": "consumer.session.timeout.ms=50000 share.auto.offset.reset=earliest",
		"g3": "consumer.session.timeout.ms=47000",
	} {
		if got := configsOf(q.Image(), ConfigResourceGroup, group); got != want {
			t.Fatalf("%s after restore: %q, want %q", group, got, want)
		}
	}
}
