package mirrorit

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/raftmeta"
)

// setQuotas applies "type=name[,type=name]" entity ops ("key=value" or
// "-key") through adm.
func setQuotas(t *testing.T, ctx context.Context, adm *kadm.Client, entity string, ops ...string) {
	t.Helper()
	e := kadm.AlterClientQuotaEntry{}
	for _, c := range strings.Split(entity, ",") {
		typ, name, _ := strings.Cut(c, "=")
		comp := kadm.ClientQuotaEntityComponent{Type: typ}
		if name != "<default>" {
			comp.Name = kmsg.StringPtr(name)
		}
		e.Entity = append(e.Entity, comp)
	}
	for _, o := range ops {
		if k, ok := strings.CutPrefix(o, "-"); ok {
			e.Ops = append(e.Ops, kadm.AlterClientQuotaOp{Key: k, Remove: true})
			continue
		}
		k, v, _ := strings.Cut(o, "=")
		var f float64
		fmt.Sscan(v, &f)
		e.Ops = append(e.Ops, kadm.AlterClientQuotaOp{Key: k, Value: f})
	}
	res, err := adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{e})
	if err == nil {
		err = res[0].Err
	}
	if err != nil {
		t.Fatalf("quotas of %s: %v", entity, err)
	}
}

// listQuotas is every quota of a cluster, "entity{key=value,...}" sorted.
func listQuotas(t *testing.T, ctx context.Context, adm *kadm.Client) string {
	t.Helper()
	qs, err := adm.DescribeClientQuotas(ctx, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, q := range qs {
		var ent, vals []string
		for _, c := range q.Entity {
			ent = append(ent, c.String())
		}
		for _, v := range q.Values {
			vals = append(vals, fmt.Sprintf("%s=%g", v.Key, v.Value))
		}
		out = append(out, strings.Join(ent, ",")+"{"+strings.Join(vals, ",")+"}")
	}
	return strings.Join(out, " ")
}

// TestSyncClientQuotas: with mirror.client.quotas.sync.enable (off by
// default: a few rounds copy nothing), the destination's client quotas
// become the source's, and follow its changes and removals.
func TestSyncClientQuotas(t *testing.T) {
	t.Parallel()
	p := newPair(t, 60*time.Second, startOne(t, "source"), startOne(t, "destination", brokertest.WithMetrics()))
	srcAdm, dstAdm := p.src.admin(t), p.dst.admin(t)
	setQuotas(t, p.ctx, srcAdm, "user=alice", "producer_byte_rate=5000000")
	setQuotas(t, p.ctx, srcAdm, "user=<default>,client-id=<default>", "consumer_byte_rate=1000000", "request_percentage=50")
	setQuotas(t, p.ctx, dstAdm, "client-id=local", "producer_byte_rate=42")

	p.createMirror(syncInterval)
	p.waitSyncRounds(3)
	if got := listQuotas(t, p.ctx, dstAdm); got != "client-id=local{producer_byte_rate=42}" {
		t.Fatalf("with the sync disabled the destination has %s", got)
	}

	alterMirrorConfig(t, p, raftmeta.MirrorClientQuotasSyncEnableConfig, "true")
	want := "user=<default>,client-id=<default>{consumer_byte_rate=1e+06,request_percentage=50} user=alice{producer_byte_rate=5e+06}"
	p.waitFor(10*time.Second, "the source's quotas on the destination", func() string {
		if got := listQuotas(t, p.ctx, dstAdm); got != want {
			return got
		}
		return ""
	})
	setQuotas(t, p.ctx, srcAdm, "user=alice", "producer_byte_rate=6000000")
	setQuotas(t, p.ctx, srcAdm, "user=<default>,client-id=<default>", "-request_percentage")
	want = "user=<default>,client-id=<default>{consumer_byte_rate=1e+06} user=alice{producer_byte_rate=6e+06}"
	p.waitFor(10*time.Second, "the source's changes on the destination", func() string {
		if got := listQuotas(t, p.ctx, dstAdm); got != want {
			return got
		}
		return ""
	})
	if n := mirrorMetrics(t, p.ctx, p.dst.one.MetricsAddr())["strait_mirror_client_quotas_altered_total"]; n < 3 {
		t.Errorf("strait_mirror_client_quotas_altered_total %v", n)
	}
}

// waitSyncRounds waits until the destination's syncer of the mirror has
// run n rounds (the destination needs brokertest.WithMetrics).
func (p *pair) waitSyncRounds(n float64) {
	p.t.Helper()
	p.waitFor(10*time.Second, fmt.Sprintf("%v sync rounds", n), func() string {
		if got := mirrorMetrics(p.t, p.ctx, p.dst.one.MetricsAddr())["strait_mirror_sync_rounds_total"]; got < n {
			return fmt.Sprintf("%v rounds", got)
		}
		return ""
	})
}
