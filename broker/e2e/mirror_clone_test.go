package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/mirror/admin"
)

// TestMirrorDrillCloneCLI is issue 27's DR drill done-when, from the
// `strait` binary: with two `strait serve` processes mirroring a topic and
// the source still producing, `strait mirror clone m1 --topic T --as
// T-drill --json` makes a clone that takes writes at once (after the
// cloned records and the producers' reset) while T keeps mirroring with
// lag 0; deleting the clone leaves T mirroring and byte-identical to the
// source. `strait mirror --help` documents clone with examples.
func TestMirrorDrillCloneCLI(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ps := freePorts(t, 2)
	// The destination rolls segments often, so the clone shares closed ones.
	src, dst := newNodeOn(t, ps[0]), newNodeOn(t, ps[1], "log.roll.ms=200")
	src.start()
	dst.start()
	const topic, clone, partitions = "orders", "orders-drill", 2
	createTopic(t, newAdmin(t, src.kafkaAddr()), topic, partitions)
	n := mirrorProduce(t, ctx, src.kafkaAddr(), topic, partitions, 200)
	cli := mirrorCLI(t, dst.kafkaAddr())
	if help := cli(0, "--help"); !strings.Contains(help, "clone    NAME --topic T --as CLONE [--json]") ||
		!strings.Contains(help, "strait mirror clone dr --topic orders --as orders-drill --json") {
		t.Errorf("strait mirror --help does not document clone with an example:\n%s", help)
	}
	cli(0, "create", "m1", "--source-bootstrap", src.kafkaAddr())
	cli(0, "start", "m1", "--topic", topic, "--wait")

	// The source keeps producing through the drill.
	var live atomic.Int64
	prodCtx, stopProducing := context.WithCancel(ctx)
	prodDone := make(chan error, 1)
	go func() {
		cl := newClient(t, src.kafkaAddr(), kgo.DefaultProduceTopic(topic))
		for i := 0; prodCtx.Err() == nil; i++ {
			if err := cl.ProduceSync(prodCtx, &kgo.Record{Value: fmt.Appendf(nil, "live-%d", i)}).FirstErr(); err != nil && prodCtx.Err() == nil {
				prodDone <- err
				return
			}
			live.Add(1)
			time.Sleep(20 * time.Millisecond)
		}
		prodDone <- nil
	}()
	waitUntil(t, 30*time.Second, "the source producing", func() (bool, string) { return live.Load() >= 20, "" })

	out := cli(0, "clone", "m1", "--topic", topic, "--as", clone, "--json")
	var res admin.CloneResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("clone --json printed %q: %v", out, err)
	}
	t.Logf("clone: %s", strings.TrimSpace(out))
	var cloned int64
	for _, pt := range res.Points {
		cloned += pt.Offset
	}
	if res.Clone != clone || res.Topic != topic || len(res.Points) != partitions || cloned < int64(n) {
		t.Fatalf("clone --json: %+v; want %d partitions holding at least the %d records mirrored before", res, partitions, n)
	}

	// The clone is writable (the producer retries until its leader has
	// reset the source's producers) and its records follow the clone
	// point and the reset.
	drill := seqValues("drill", 5)
	produceValues(t, ctx, dst.kafkaAddr(), clone, drill...)
	point := res.Points[0].Offset
	cl := newClient(t, dst.kafkaAddr(), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{clone: {0: kgo.NewOffset().At(point)}}))
	var tail []string
	for len(tail) < len(drill) && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			if want := point + 1 + int64(len(tail)); r.Offset != want {
				t.Errorf("clone record %q at offset %d, want %d (after the reset at the clone point %d)", r.Value, r.Offset, want, point)
			}
			tail = append(tail, string(r.Value))
		})
	}
	if strings.Join(tail, ",") != strings.Join(drill, ",") {
		t.Fatalf("clone partition 0 from the point %d: %q, want %q", point, tail, drill)
	}

	// The mirror goes on: lag 0 on every partition while the source
	// produces.
	waitMirrorLagZero(t, cli, topic, partitions)
	before := live.Load()
	waitUntil(t, 30*time.Second, "the source still producing", func() (bool, string) { return live.Load() > before, "" })

	// Deleting the clone leaves the mirror topic alone.
	if _, err := newAdmin(t, dst.kafkaAddr()).DeleteTopics(ctx, clone); err != nil {
		t.Fatalf("delete %s: %v", clone, err)
	}
	waitUntil(t, 30*time.Second, clone+" gone", func() (bool, string) {
		td, err := newAdmin(t, dst.kafkaAddr()).ListTopics(ctx)
		return err == nil && !td.Has(clone), fmt.Sprint(td.Names(), err)
	})
	stopProducing()
	if err := <-prodDone; err != nil {
		t.Fatalf("source producer: %v", err)
	}
	srcEnds := mirrorEnds(t, ctx, src.kafkaAddr(), topic)
	waitUntil(t, time.Minute, "the destination at the source's end", func() (bool, string) {
		d := mirrorEnds(t, ctx, dst.kafkaAddr(), topic)
		return fmt.Sprint(d) == fmt.Sprint(srcEnds), fmt.Sprint(d, srcEnds)
	})
	waitMirrorLagZero(t, cli, topic, partitions)
	r := mirrorCompare(t, ctx, src.kafkaAddr(), dst.kafkaAddr(), topic)
	t.Logf("after the drill: produced %d + %d live, %v", n, live.Load(), r)
	for _, e := range r.Examples {
		t.Error(e)
	}
	if !r.OK() || r.Records < int64(n)+live.Load() {
		t.Fatalf("the mirror topic is not the source's copy after the drill: %v", r)
	}
}

// waitMirrorLagZero waits until describe --json shows every partition of
// topic MIRRORING with lag 0.
func waitMirrorLagZero(t *testing.T, cli func(int, ...string) string, topic string, partitions int) {
	t.Helper()
	waitUntil(t, time.Minute, topic+": every partition MIRRORING with lag 0", func() (bool, string) {
		out := cli(0, "describe", "m1", "--json")
		var d admin.MirrorDescription
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatalf("describe --json printed %q: %v", out, err)
		}
		for _, td := range d.Topics {
			if td.Name != topic {
				continue
			}
			ok := len(td.Partitions) == partitions
			for _, pd := range td.Partitions {
				ok = ok && pd.State == "MIRRORING" && pd.Lag == 0
			}
			return ok, out
		}
		return false, out
	})
}
