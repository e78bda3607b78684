package broker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
)

// testCtx is a context bounded by d and the test's end.
func testCtx(t testing.TB, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// createTopic creates a topic with the given partition count and configs
// (key, value pairs) and fails the test on any error.
func createTopic(t testing.TB, adm *kadm.Client, topic string, partitions int32, configs ...string) {
	t.Helper()
	createReplicatedTopic(t, adm, topic, partitions, 1, configs...)
}

// createReplicatedTopic is createTopic with rf replicas per partition.
func createReplicatedTopic(t testing.TB, adm *kadm.Client, topic string, partitions int32, rf int16, configs ...string) {
	t.Helper()
	cfg := map[string]*string{}
	for i := 0; i+1 < len(configs); i += 2 {
		cfg[configs[i]] = kadm.StringPtr(configs[i+1])
	}
	resp, err := adm.CreateTopic(testCtx(t, 10*time.Second), partitions, rf, cfg, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
}

// consumeN reads from the start of the given partitions (every partition
// of each topic when parts is nil) until n records arrived or ctx ends;
// it fails the test on a fetch error or a timeout.
func consumeN(t testing.TB, b *brokertest.Broker, n int, topics []string, opts ...kgo.Opt) []*kgo.Record {
	t.Helper()
	ctx := testCtx(t, 30*time.Second)
	cl := b.Client(t, append([]kgo.Opt{
		kgo.ConsumeTopics(topics...),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	}, opts...)...)
	defer cl.Close()
	return pollN(ctx, t, cl, n)
}

// pollN polls cl until n records arrived.
func pollN(ctx context.Context, t testing.TB, cl *kgo.Client, n int) []*kgo.Record {
	t.Helper()
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records before %v", len(out), n, ctx.Err())
		}
		fs.EachError(func(topic string, p int32, err error) {
			t.Fatalf("fetch %s[%d]: %v", topic, p, err)
		})
		out = append(out, fs.Records()...)
	}
	return out
}

// produceSync produces rs with acks=all and fails the test on any error.
func produceSync(t testing.TB, cl *kgo.Client, rs ...*kgo.Record) {
	t.Helper()
	if err := cl.ProduceSync(testCtx(t, 30*time.Second), rs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

func tp(topic string, p int32) string { return fmt.Sprintf("%s[%d]", topic, p) }

func itoa(n int32) string { return fmt.Sprint(n) }
