package broker_test

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/broker/brokertest"
)

// TestDynamicListenerKeysIgnored: listeners, advertised.listeners and
// listener.security.protocol.map, which Kafka changes at runtime per
// broker (DynamicListenerConfig), are accepted on a broker's resource,
// stored, described and logged as ignored with the reason: Strait serves
// the listeners of server.properties and neither opens nor closes one at
// runtime. The node keeps serving and advertising its static listeners,
// after a restart too. Kafka's checks of a listener change apply, and the
// cluster default refuses them as Kafka does.
func TestDynamicListenerKeysIgnored(t *testing.T) {
	b := brokertest.Start(t)
	adm := b.Admin(t)
	ctx := testCtx(t, 60*time.Second)
	const advertised = "PLAINTEXT://broker1.example.invalid:19092"
	const reason = `reason="Strait opens its listeners from server.properties at start and does not open or close listeners at runtime"`
	logged := func(key string) string {
		return `"ignoring a config set at runtime that Strait reads from server.properties only" key=` + key + ` resource="broker 1" ` + reason
	}

	// kafka-go's (legacy) AlterConfigs and DescribeConfigs.
	if e := kafkaGoSetOnBroker1(ctx, t, b, "advertised.listeners", advertised); e.ConfigValue != advertised || e.ConfigSource != 2 || e.ReadOnly {
		t.Fatalf("kafka-go describes %+v, want %s from DYNAMIC_BROKER_CONFIG (2), not read-only", e, advertised)
	}
	waitLog(t, b, logged("advertised.listeners"))
	staticAdvertised(t, adm, b.Addr())

	// kadm's IncrementalAlterConfigs adds a listener on a free port; no
	// listener opens there.
	free := brokertest.FreePorts(t, 1)[0]
	listeners := fmt.Sprintf("PLAINTEXT://%s,CONTROLLER://%s,EXTERNAL://127.0.0.1:%d", b.Addr(), b.ControllerAddr(), free)
	const protocols = "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,EXTERNAL:PLAINTEXT"
	rs, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{set("listeners", listeners), set("listener.security.protocol.map", protocols)}, 1)
	if err := alterErr(t, rs, err); err != nil {
		t.Fatalf("alter broker 1's listeners: %v", err)
	}
	for key, want := range map[string]string{
		"listeners":                      listeners + " (DYNAMIC_BROKER_CONFIG)",
		"listener.security.protocol.map": protocols + " (DYNAMIC_BROKER_CONFIG)",
		"advertised.listeners":           advertised + " (DYNAMIC_BROKER_CONFIG)",
	} {
		if got := describedConfig(t, adm, true, "1", key); got != want {
			t.Errorf("%s described as %s, want %s", key, got, want)
		}
	}
	waitLog(t, b, logged("listener.security.protocol.map"), logged("listeners"))
	notListening(t, free)
	staticAdvertised(t, adm, b.Addr())

	// Kafka's checks; the stored values stay.
	expectRefusals(ctx, t, adm, []refusal{
		{"for every broker", []kadm.AlterConfig{set("advertised.listeners", advertised)}, nil, kerr.InvalidRequest,
			"Cannot update these configs at default cluster level, broker id must be specified: advertised.listeners"},
		{"a listener without a protocol", []kadm.AlterConfig{set("listeners", listeners+",OTHER://127.0.0.1:1")}, []int32{1}, kerr.InvalidConfig,
			"Invalid value for configuration listeners: listeners: Error creating broker listeners from '" + listeners +
				",OTHER://127.0.0.1:1': No security protocol defined for listener OTHER"},
		{"two listeners on a port", []kadm.AlterConfig{set("listeners", fmt.Sprintf("PLAINTEXT://%s,CONTROLLER://%s,EXTERNAL://:%d,X://:%d", b.Addr(), b.ControllerAddr(), free, free)),
			set("listener.security.protocol.map", protocols+",X:PLAINTEXT")}, []int32{1}, kerr.InvalidConfig,
			fmt.Sprintf("Invalid value for configuration listeners: listeners: Each listener must have a different port unless exactly one listener has an IPv4 address and the other IPv6 address, listeners: PLAINTEXT://%s,CONTROLLER://%s,EXTERNAL://:%d,X://:%d, port: %d", b.Addr(), b.ControllerAddr(), free, free, free)},
		{"the inter-broker listener removed", []kadm.AlterConfig{set("advertised.listeners", fmt.Sprintf("EXTERNAL://127.0.0.1:%d", free))}, []int32{1}, kerr.InvalidConfig,
			"Invalid value for configuration advertised.listeners: inter.broker.listener.name must be a listener name defined in advertised.listeners. The valid options based on currently configured listeners are EXTERNAL"},
		{"a listener's protocol changed", []kadm.AlterConfig{set("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,EXTERNAL:SSL")}, []int32{1}, kerr.InvalidConfig,
			"Invalid value for configuration listener.security.protocol.map: Security protocol cannot be updated for existing listener EXTERNAL"},
	})
	if got := describedConfig(t, adm, true, "1", "listeners"); got != listeners+" (DYNAMIC_BROKER_CONFIG)" {
		t.Errorf("after the refusals listeners described as %s", got)
	}

	// A restart serves server.properties' listeners, says so again, and
	// still describes the stored values.
	b.Restart(t)
	adm = b.Admin(t)
	waitLogAfter(t, b, `msg="strait broker stopped"`, logged("advertised.listeners"))
	staticAdvertised(t, adm, b.Addr())
	notListening(t, free)
	if got := describedConfig(t, adm, true, "1", "advertised.listeners"); got != advertised+" (DYNAMIC_BROKER_CONFIG)" {
		t.Errorf("after a restart advertised.listeners described as %s", got)
	}
}

// waitLogAfter waits for the broker's log to hold line after the last
// marker (or anywhere once the marker has left the log's window).
func waitLogAfter(t *testing.T, b *brokertest.Broker, marker, line string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		logs := b.Logs()
		if i := strings.LastIndex(logs, line); i >= 0 && i > strings.LastIndex(logs, marker) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no log line %s after %s in:\n%s", line, marker, logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// staticAdvertised checks that Metadata advertises broker 1 at addr.
func staticAdvertised(t *testing.T, adm *kadm.Client, addr string) {
	t.Helper()
	md, err := adm.BrokerMetadata(testCtx(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if len(md.Brokers) != 1 || net.JoinHostPort(md.Brokers[0].Host, strconv.Itoa(int(md.Brokers[0].Port))) != addr {
		t.Fatalf("Metadata advertises %+v, want broker 1 at %s", md.Brokers, addr)
	}
}

// notListening checks that nothing accepts on 127.0.0.1:port.
func notListening(t *testing.T, port int) {
	t.Helper()
	if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 2*time.Second); err == nil {
		c.Close()
		t.Fatalf("a listener opened on port %d", port)
	}
}
