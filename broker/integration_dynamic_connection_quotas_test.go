package broker_test

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/broker/brokertest"
)

// dialServed connects to addr from the loopback address from (all of
// 127.0.0.0/8 is local on Linux) and reports whether the broker serves
// the connection: it answers an ApiVersions v0, or closes the connection
// as max.connections.per.ip makes it. The connection stays open, counted,
// until the test ends.
func dialServed(t *testing.T, from, addr string) bool {
	t.Helper()
	d := net.Dialer{Timeout: 10 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial %s from %s: %v", addr, from, err)
	}
	t.Cleanup(func() { c.Close() })
	// ApiVersions v0: key 18, version 0, correlation 1, null client id.
	req := []byte{0, 0, 0, 10, 0, 18, 0, 0, 0, 0, 0, 1, 0xff, 0xff}
	if _, err := c.Write(req); err != nil {
		return false
	}
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("connection from %s neither served nor closed in 20 s", from)
		}
		return false
	}
	if _, err := io.ReadFull(c, make([]byte, binary.BigEndian.Uint32(size[:]))); err != nil {
		t.Fatalf("ApiVersions answer from %s cut: %v", from, err)
	}
	return true
}

// TestDynamicConnectionQuotas: the connection quotas change at runtime, as
// Kafka's DynamicConnectionQuota changes them. max.connections.per.ip set
// for broker 1 refuses the next connection from an address at the new
// limit (the test's own admin client, from 127.0.0.1, gets an override);
// the cluster-wide value raised and the broker's own deleted, the address
// gets one more; after a restart the dynamic values apply again. Each is
// described with its DYNAMIC_* source.
func TestDynamicConnectionQuotas(t *testing.T) {
	b := brokertest.Start(t)
	adm := b.Admin(t)
	ctx := testCtx(t, 90*time.Second)
	const client = "127.0.0.2"
	addr := b.Addr()

	// waitServed dials from client until the broker answers as want: the
	// metadata subscriber applies an alteration after it is answered.
	waitServed := func(want bool, what string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for dialServed(t, client, addr) != want {
			if time.Now().After(deadline) {
				t.Fatalf("%s: a new connection from %s still served=%t", what, client, !want)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	if !dialServed(t, client, addr) {
		t.Fatal("a connection refused before any limit")
	}

	rs, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{set("max.connections.per.ip", "2"),
		set("max.connections.per.ip.overrides", "127.0.0.1:1000")}, 1)
	if err := alterErr(t, rs, err); err != nil {
		t.Fatalf("alter broker 1's max.connections.per.ip: %v", err)
	}
	if got := describedConfig(t, adm, true, "1", "max.connections.per.ip"); got != "2 (DYNAMIC_BROKER_CONFIG)" {
		t.Fatalf("max.connections.per.ip described as %s", got)
	}
	// One connection held from the start, one more makes 2: the next is
	// refused.
	waitServed(false, "max.connections.per.ip=2 on broker 1")

	rs, err = adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{set("max.connections.per.ip", "4")})
	if err := alterErr(t, rs, err); err != nil {
		t.Fatalf("alter the cluster's max.connections.per.ip: %v", err)
	}
	rs, err = adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.DeleteConfig, Name: "max.connections.per.ip"}}, 1)
	if err := alterErr(t, rs, err); err != nil {
		t.Fatalf("delete broker 1's max.connections.per.ip: %v", err)
	}
	if got := describedConfig(t, adm, true, "1", "max.connections.per.ip"); got != "4 (DYNAMIC_DEFAULT_BROKER_CONFIG)" {
		t.Fatalf("max.connections.per.ip described as %s", got)
	}
	waitServed(true, "max.connections.per.ip=4 for every broker")
	for i := 0; dialServed(t, client, addr); i++ { // up to the fourth held, then refused
		if i == 4 {
			t.Fatal("more than 4 connections from one address served under max.connections.per.ip=4")
		}
	}

	// Per listener, cluster-wide: accepted and described.
	rs, err = adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{set("listener.name.plaintext.max.connections", "500")})
	if err := alterErr(t, rs, err); err != nil {
		t.Fatalf("alter the cluster's listener.name.plaintext.max.connections: %v", err)
	}
	if got := describedConfig(t, adm, true, "1", "listener.name.plaintext.max.connections"); got != "500 (DYNAMIC_DEFAULT_BROKER_CONFIG)" {
		t.Fatalf("listener.name.plaintext.max.connections described as %s", got)
	}

	// Checked with the rest of the configuration, as Kafka's
	// KafkaConfig.validateValues checks the new one.
	rs, err = adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{set("max.connections.per.ip", "0"),
		{Op: kadm.DeleteConfig, Name: "max.connections.per.ip.overrides"}}, 1)
	if err := alterErr(t, rs, err); !errors.Is(err, kerr.InvalidConfig) ||
		rs[0].ErrMessage != "max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides property is set." {
		t.Fatalf("max.connections.per.ip=0 without overrides: %v %q, want INVALID_CONFIG", err, rs[0].ErrMessage)
	}

	b.Restart(t)
	addr = b.Addr()
	adm = b.Admin(t)
	for range 4 {
		if !dialServed(t, client, addr) {
			t.Fatal("after a restart: a connection under the dynamic max.connections.per.ip=4 refused")
		}
	}
	if dialServed(t, client, addr) {
		t.Fatal("after a restart: a fifth connection served; the dynamic max.connections.per.ip=4 no longer applies")
	}
	if got := describedConfig(t, adm, true, "1", "max.connections.per.ip.overrides"); got != "127.0.0.1:1000 (DYNAMIC_BROKER_CONFIG)" {
		t.Fatalf("after a restart max.connections.per.ip.overrides described as %s", got)
	}
}
