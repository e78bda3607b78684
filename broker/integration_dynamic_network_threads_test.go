package broker_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/broker/brokertest"
)

// waitLog waits for the broker's log to hold each of lines.
func waitLog(t *testing.T, b *brokertest.Broker, lines ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		logs, missing := b.Logs(), ""
		for _, l := range lines {
			if !strings.Contains(logs, l) {
				missing = l
				break
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no log line %s in:\n%s", missing, logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestDynamicNetworkThreads: num.network.threads, which Kafka resizes at
// runtime (DynamicThreadPool), is accepted per broker and for every broker,
// stored and described; Strait's event loops are fixed when the listeners
// start, so the broker logs that it ignores the change until its next
// start, with the reason, and starts with the value after a restart.
func TestDynamicNetworkThreads(t *testing.T) {
	b := brokertest.Start(t)
	adm := b.Admin(t)
	ctx := testCtx(t, 60*time.Second)

	rs, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{set("num.network.threads", "2")})
	if err := alterErr(t, rs, err); err != nil {
		t.Fatalf("alter the cluster's num.network.threads: %v", err)
	}
	rs, err = adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{set("num.network.threads", "3")}, 1)
	if err := alterErr(t, rs, err); err != nil {
		t.Fatalf("alter broker 1's num.network.threads: %v", err)
	}
	if got := describedConfig(t, adm, true, "1", "num.network.threads"); got != "3 (DYNAMIC_BROKER_CONFIG)" {
		t.Fatalf("num.network.threads described as %s", got)
	}
	const reason = `reason="the event loops of the listeners are fixed when they start"`
	waitLog(t, b,
		`"ignoring a runtime change Strait applies at its next start" key=num.network.threads resource="cluster default" `+reason,
		`"ignoring a runtime change Strait applies at its next start" key=num.network.threads resource="broker 1" `+reason)
	rs, err = adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{set("num.network.threads", "0")}, 1)
	if err := alterErr(t, rs, err); !errors.Is(err, kerr.InvalidConfig) {
		t.Fatalf("num.network.threads=0: %v, want INVALID_CONFIG", err)
	}

	b.Restart(t)
	waitLog(t, b, `"listeners start with num.network.threads set at runtime" num.network.threads=3`)
	if got := describedConfig(t, b.Admin(t), true, "1", "num.network.threads"); got != "3 (DYNAMIC_BROKER_CONFIG)" {
		t.Fatalf("after a restart num.network.threads described as %s", got)
	}
}
