package brokertest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
)

// TestStartProduceRestartCrash checks the harness itself: a record
// produced before a graceful restart and one produced before a crash are
// both read back afterwards from the same address.
func TestStartProduceRestartCrash(t *testing.T) {
	b := brokertest.Start(t, brokertest.WithConfig("num.partitions=1"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	addr := b.Addr()
	// Both listeners report the ports they bound, not the 0 configured.
	for _, a := range []string{addr, b.ControllerAddr()} {
		if !strings.HasPrefix(a, "127.0.0.1:") || strings.HasSuffix(a, ":0") {
			t.Fatalf("listener address %q", a)
		}
	}

	produce := func(v string) {
		t.Helper()
		cl := b.Client(t, kgo.AllowAutoTopicCreation(), kgo.DefaultProduceTopic("h"))
		if err := cl.ProduceSync(ctx, kgo.StringRecord(v)).FirstErr(); err != nil {
			t.Fatalf("produce %s: %v", v, err)
		}
		cl.Close()
	}
	produce("a")
	b.Restart(t)
	if b.Addr() != addr {
		t.Fatalf("restart moved the listener from %s to %s", addr, b.Addr())
	}
	produce("b")
	b.Crash(t)
	b.StartAgain(t)
	// The restart after the crash found no clean shutdown marker.
	logs := b.Logs()
	if i := strings.LastIndex(logs, "log directory loaded"); i < 0 || !strings.Contains(logs[i:], "cleanShutdown=false") {
		t.Fatalf("the start after Crash did not recover the log directory:\n%s", logs)
	}

	cl := b.Client(t, kgo.ConsumeTopics("h"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var got []string
	for len(got) < 2 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("read %q before %v", got, err)
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	if len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Fatalf("read %q, want [a b]", got)
	}

	// A second broker on the stopped one's directory, on ports of its own.
	b.Stop(t)
	b2 := brokertest.Start(t, brokertest.WithDir(b.Dir()))
	adm := b2.Admin(t)
	end, err := adm.ListEndOffsets(ctx, "h")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := end.Lookup("h", 0); o.Offset != 2 {
		t.Fatalf("h ends at %d on the second broker, want 2", o.Offset)
	}
}
