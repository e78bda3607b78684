package raftmeta

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// quotaEntry builds an AlterClientQuotas entry from "type=name" pairs
// ("type=" is the default) and "key=value" or "-key" ops.
func quotaEntry(entity []string, ops ...string) kmsg.AlterClientQuotasRequestEntry {
	e := kmsg.NewAlterClientQuotasRequestEntry()
	for _, c := range entity {
		typ, name, _ := strings.Cut(c, "=")
		ee := kmsg.NewAlterClientQuotasRequestEntryEntity()
		ee.Type = typ
		if name != "" {
			ee.Name = kmsg.StringPtr(name)
		}
		e.Entity = append(e.Entity, ee)
	}
	for _, o := range ops {
		op := kmsg.NewAlterClientQuotasRequestEntryOp()
		if k, ok := strings.CutPrefix(o, "-"); ok {
			op.Key, op.Remove = k, true
		} else {
			k, v, _ := strings.Cut(o, "=")
			op.Key = k
			fmt.Sscan(v, &op.Value)
		}
		e.Ops = append(e.Ops, op)
	}
	return e
}

func alterQuotas(c *Controller, validateOnly bool, entries ...kmsg.AlterClientQuotasRequestEntry) string {
	req := kmsg.NewPtrAlterClientQuotasRequest()
	req.Entries, req.ValidateOnly = entries, validateOnly
	var out []string
	for _, r := range c.AlterClientQuotas(context.Background(), req).Entries {
		out = append(out, codeName(r.ErrorCode))
	}
	return strings.Join(out, " ")
}

func describeQuotas(c *Controller, strict bool, comps ...kmsg.DescribeClientQuotasRequestComponent) string {
	req := kmsg.NewPtrDescribeClientQuotasRequest()
	req.Components, req.Strict = comps, strict
	resp := c.DescribeClientQuotas(context.Background(), req)
	if resp.ErrorCode != 0 {
		return codeName(resp.ErrorCode) + ": " + deref(resp.ErrorMessage)
	}
	var out []string
	for _, e := range resp.Entries {
		var ent, vals []string
		for _, c := range e.Entity {
			n := "<default>"
			if c.Name != nil {
				n = *c.Name
			}
			ent = append(ent, c.Type+"="+n)
		}
		for _, v := range e.Values {
			vals = append(vals, fmt.Sprintf("%s=%g", v.Key, v.Value))
		}
		out = append(out, strings.Join(ent, ",")+"{"+strings.Join(vals, ",")+"}")
	}
	return strings.Join(out, " ")
}

func component(typ string, match int8, name ...string) kmsg.DescribeClientQuotasRequestComponent {
	c := kmsg.NewDescribeClientQuotasRequestComponent()
	c.EntityType, c.MatchType = typ, kmsg.QuotasMatchType(match)
	if len(name) > 0 {
		c.Match = kmsg.StringPtr(name[0])
	}
	return c
}

// AlterClientQuotas checks each entry as Kafka's ClientQuotaControlManager
// does and stores the valid ones; DescribeClientQuotas filters them by
// EXACT, DEFAULT and SPECIFIED components, strict or not.
func TestAlterDescribeClientQuotas(t *testing.T) {
	c, log := newTestController(t, Config{}, 1)
	got := alterQuotas(c, false,
		quotaEntry([]string{"user=alice"}, "producer_byte_rate=5000000", "request_percentage=25.5"),
		quotaEntry([]string{"user=", "client-id="}, "consumer_byte_rate=1000"),
		quotaEntry([]string{"user=alice", "client-id=app"}, "producer_byte_rate=100"),
		quotaEntry([]string{"client-id=app"}, "controller_mutation_rate=2.5"),
		quotaEntry([]string{"ip=10.0.0.1"}, "connection_creation_rate=10"),
		// Refused entries.
		quotaEntry(nil, "producer_byte_rate=1"),
		quotaEntry([]string{"group=g"}, "producer_byte_rate=1"),
		quotaEntry([]string{"user=a", "user=b"}, "producer_byte_rate=1"),
		quotaEntry([]string{"user=bob"}, "producer_byte_rate=1.5"),
		quotaEntry([]string{"user=bob"}, "producer_byte_rate=0"),
		quotaEntry([]string{"user=bob"}, "producer_byte_rate=-3"),
		quotaEntry([]string{"user=bob"}, "no_such_key=3"),
		quotaEntry([]string{"user=bob"}, "producer_byte_rate=3", "producer_byte_rate=4"),
		quotaEntry([]string{"user=bob"}, "connection_creation_rate=3"),
		quotaEntry([]string{"ip=not-an-ip"}, "connection_creation_rate=3"),
		quotaEntry([]string{"ip=10.0.0.2", "user=bob"}, "connection_creation_rate=3"),
		quotaEntry([]string{"ip=10.0.0.2"}, "connection_creation_rate=3.5"),
	)
	want := "NONE NONE NONE NONE NONE INVALID_REQUEST UNSUPPORTED_VERSION INVALID_REQUEST INVALID_REQUEST INVALID_REQUEST INVALID_REQUEST INVALID_REQUEST INVALID_REQUEST INVALID_REQUEST INVALID_REQUEST INVALID_REQUEST INVALID_REQUEST"
	if got != want {
		t.Fatalf("alter:\n got %s\nwant %s", got, want)
	}
	empty := kmsg.NewAlterClientQuotasRequestEntry()
	ee := kmsg.NewAlterClientQuotasRequestEntryEntity()
	ee.Type, ee.Name = "user", kmsg.StringPtr("")
	empty.Entity = append(empty.Entity, ee)
	if got := alterQuotas(c, false, empty); got != "INVALID_REQUEST" {
		t.Errorf("empty user name: %s", got)
	}

	all := "ip=10.0.0.1{connection_creation_rate=10} client-id=app{controller_mutation_rate=2.5} user=<default>,client-id=<default>{consumer_byte_rate=1000} user=alice{producer_byte_rate=5e+06,request_percentage=25.5} user=alice,client-id=app{producer_byte_rate=100}"
	if got := describeQuotas(c, false); got != all {
		t.Errorf("describe all:\n got %s\nwant %s", got, all)
	}
	for _, tc := range []struct {
		strict bool
		comps  []kmsg.DescribeClientQuotasRequestComponent
		want   string
	}{
		{false, []kmsg.DescribeClientQuotasRequestComponent{component("user", 0, "alice")}, "user=alice{producer_byte_rate=5e+06,request_percentage=25.5} user=alice,client-id=app{producer_byte_rate=100}"},
		{true, []kmsg.DescribeClientQuotasRequestComponent{component("user", 0, "alice")}, "user=alice{producer_byte_rate=5e+06,request_percentage=25.5}"},
		{false, []kmsg.DescribeClientQuotasRequestComponent{component("user", 1)}, "user=<default>,client-id=<default>{consumer_byte_rate=1000}"},
		{true, []kmsg.DescribeClientQuotasRequestComponent{component("user", 1)}, ""},
		{false, []kmsg.DescribeClientQuotasRequestComponent{component("client-id", 2)}, "client-id=app{controller_mutation_rate=2.5} user=<default>,client-id=<default>{consumer_byte_rate=1000} user=alice,client-id=app{producer_byte_rate=100}"},
		{true, []kmsg.DescribeClientQuotasRequestComponent{component("user", 2), component("client-id", 2)}, "user=<default>,client-id=<default>{consumer_byte_rate=1000} user=alice,client-id=app{producer_byte_rate=100}"},
		{true, []kmsg.DescribeClientQuotasRequestComponent{component("user", 0, "alice"), component("client-id", 2)}, "user=alice,client-id=app{producer_byte_rate=100}"},
		{false, []kmsg.DescribeClientQuotasRequestComponent{component("ip", 0, "10.0.0.1")}, "ip=10.0.0.1{connection_creation_rate=10}"},
		{false, []kmsg.DescribeClientQuotasRequestComponent{component("user", 0)}, "INVALID_REQUEST: Request specified MATCH_TYPE_EXACT, but set match string to null."},
		{false, []kmsg.DescribeClientQuotasRequestComponent{component("user", 1, "x")}, "INVALID_REQUEST: Request specified MATCH_TYPE_DEFAULT, but also specified a match string."},
		{false, []kmsg.DescribeClientQuotasRequestComponent{component("user", 2, "x")}, "INVALID_REQUEST: Request specified MATCH_TYPE_SPECIFIED, but also specified a match string."},
		{false, []kmsg.DescribeClientQuotasRequestComponent{component("user", 2), component("user", 1)}, "INVALID_REQUEST: Entity type user cannot appear more than once in the filter."},
		{false, []kmsg.DescribeClientQuotasRequestComponent{component("", 2)}, "INVALID_REQUEST: Invalid empty entity type."},
		{false, []kmsg.DescribeClientQuotasRequestComponent{component("group", 2)}, "UNSUPPORTED_VERSION: Unsupported entity type group"},
		{false, []kmsg.DescribeClientQuotasRequestComponent{component("user", 7)}, "UNSUPPORTED_VERSION: Unknown match type 7"},
		{false, []kmsg.DescribeClientQuotasRequestComponent{component("ip", 2), component("user", 2)}, "INVALID_REQUEST: Invalid entity filter component combination. IP filter component should not be used with user or clientId filter component."},
	} {
		if got := describeQuotas(c, tc.strict, tc.comps...); got != tc.want {
			t.Errorf("describe %v strict=%v:\n got %s\nwant %s", tc.comps, tc.strict, got, tc.want)
		}
	}

	// validate_only writes nothing; the same value again, or the removal
	// of a key that is not set, appends no record.
	before := log.proposals()
	if got := alterQuotas(c, true, quotaEntry([]string{"user=carol"}, "producer_byte_rate=7")); got != "NONE" {
		t.Errorf("validate only: %s", got)
	}
	if got := alterQuotas(c, false, quotaEntry([]string{"user=alice"}, "producer_byte_rate=5000000", "-consumer_byte_rate")); got != "NONE" {
		t.Errorf("same value: %s", got)
	}
	if log.proposals() != before {
		t.Errorf("%d proposals for nothing to change", log.proposals()-before)
	}
	if _, ok := c.log.Image().ClientQuota("carol", "x", QuotaProducerByteRate); ok {
		t.Errorf("validate only stored a quota")
	}

	// Removing every key removes the entity.
	if got := alterQuotas(c, false, quotaEntry([]string{"user=alice"}, "-producer_byte_rate", "-request_percentage")); got != "NONE" {
		t.Fatalf("remove: %s", got)
	}
	if got := describeQuotas(c, true, component("user", 0, "alice")); got != "" {
		t.Errorf("removed entity still described: %s", got)
	}

	// A snapshot keeps the quotas.
	img := c.log.Image()
	restored := snapshotRoundTrip(t, img)
	if !reflect.DeepEqual(restored.ClientQuotas, img.ClientQuotas) {
		t.Errorf("snapshot: got %v want %v", restored.ClientQuotas, img.ClientQuotas)
	}
	if d := diffImages(EmptyImage(), restored); !d.ClientQuotasChanged {
		t.Errorf("restoring a snapshot with quotas does not report them changed")
	}
}

// ClientQuota resolves a key in KIP-55's order of precedence and names the
// user and client the usage counts under.
func TestClientQuotaPrecedence(t *testing.T) {
	img := EmptyImage()
	img.ClientQuotas = map[QuotaEntity]map[string]float64{}
	set := func(e QuotaEntity, v float64) { img.ClientQuotas[e] = map[string]float64{QuotaProducerByteRate: v} }
	none := QuotaEntityName{}
	levels := []QuotaEntity{
		{User: Named("u"), ClientID: Named("c")},
		{User: Named("u"), ClientID: DefaultName()},
		{User: Named("u")},
		{User: DefaultName(), ClientID: Named("c")},
		{User: DefaultName(), ClientID: DefaultName()},
		{User: DefaultName()},
		{ClientID: Named("c")},
		{ClientID: DefaultName(), User: none},
	}
	if _, ok := img.ClientQuota("u", "c", QuotaProducerByteRate); ok {
		t.Fatal("a quota without any set")
	}
	// Set from the lowest level up: each new one wins.
	for i := len(levels) - 1; i >= 0; i-- {
		set(levels[i], float64(i+1))
		q, ok := img.ClientQuota("u", "c", QuotaProducerByteRate)
		if !ok || q.Value != float64(i+1) || q.Entity != levels[i] {
			t.Fatalf("level %d (%s): got %+v %v", i+1, levels[i], q, ok)
		}
		wantUser, wantClient := "", ""
		if levels[i].User.Set {
			wantUser = "u"
		}
		if levels[i].ClientID.Set {
			wantClient = "c"
		}
		if q.User != wantUser || q.Client != wantClient {
			t.Errorf("level %d: tags %q %q, want %q %q", i+1, q.User, q.Client, wantUser, wantClient)
		}
	}
	// Another user under the defaults has its own user tag.
	if q, _ := img.ClientQuota("v", "d", QuotaProducerByteRate); q.Value != 5 || q.User != "v" || q.Client != "d" {
		t.Errorf("other user: %+v", q)
	}
}

// snapshotRoundTrip writes img as a snapshot and reads it back.
func snapshotRoundTrip(t *testing.T, img *Image) *Image {
	t.Helper()
	var buf bytes.Buffer
	if err := writeSnapshot(&buf, img); err != nil {
		t.Fatal(err)
	}
	got, err := readSnapshot(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return got
}
