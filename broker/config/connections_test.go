package config

import (
	"maps"
	"slices"
	"testing"
)

func TestConnectionLimits(t *testing.T) {
	c, err := New(map[string]string{
		"listeners":                                "PLAINTEXT://127.0.0.1:9092,INTERNAL://127.0.0.1:9094,CONTROLLER://127.0.0.1:9093",
		"listener.security.protocol.map":           "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT",
		"inter.broker.listener.name":               "INTERNAL",
		"max.connections":                          "1000",
		"max.connections.per.ip":                   "0",
		"max.connections.per.ip.overrides":         " broker-1.example:100 , 127.0.0.1:200,::1:300",
		"listener.name.plaintext.max.connections":  "800",
		"listener.name.controller.max.connections": "5",
		"listener.name.nosuch.max.connections":     "5",
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxConnections != 1000 || c.MaxConnectionsPerIP != 0 {
		t.Fatalf("max.connections %d, per ip %d", c.MaxConnections, c.MaxConnectionsPerIP)
	}
	if want := map[string]int32{"broker-1.example": 100, "127.0.0.1": 200, "::1": 300}; !maps.Equal(c.MaxConnectionsPerIPOverrides, want) {
		t.Fatalf("overrides %v", c.MaxConnectionsPerIPOverrides)
	}
	if want := map[string]int32{"PLAINTEXT": 800}; !maps.Equal(c.ListenerMaxConnections, want) {
		t.Fatalf("listener limits %v", c.ListenerMaxConnections)
	}
	// Limits for listeners that serve no Kafka clients have no effect.
	if want := []string{"listener.name.controller.max.connections", "listener.name.nosuch.max.connections"}; !slices.Equal(c.Ignored, want) {
		t.Fatalf("ignored %q", c.Ignored)
	}
}

func TestConnectionLimitErrors(t *testing.T) {
	for _, tc := range []struct {
		props map[string]string
		want  string
	}{
		{map[string]string{"max.connections": "-1"}, "Invalid value -1 for configuration max.connections: Value must be at least 0"},
		{map[string]string{"max.connections.per.ip": "-1"}, "Invalid value -1 for configuration max.connections.per.ip: Value must be at least 0"},
		{map[string]string{"max.connections.per.ip": "0"}, "max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides property is set."},
		{map[string]string{"max.connections.per.ip.overrides": "host/1:3,ok:1,b@d:2"},
			"Invalid value host/1:3,ok:1,b@d:2 for configuration max.connections.per.ip.overrides: max.connections.per.ip.overrides contains invalid addresses : host/1,b@d"},
		{map[string]string{"max.connections.per.ip.overrides": "host"},
			`Invalid value host for configuration max.connections.per.ip.overrides: Error parsing configuration property 'max.connections.per.ip.overrides': "host" is not host:count`},
		{map[string]string{"max.connections.per.ip.overrides": "host:many"},
			`Invalid value host:many for configuration max.connections.per.ip.overrides: the count of "host" must be an integer, not "many"`},
		{map[string]string{"max.connections.per.ip.overrides": ":5"},
			"Invalid value :5 for configuration max.connections.per.ip.overrides: max.connections.per.ip.overrides contains invalid addresses : "},
		{map[string]string{"listener.name.plaintext.max.connections": "-2"},
			"Invalid value -2 for configuration listener.name.plaintext.max.connections: Value must be at least 0"},
	} {
		_, err := New(tc.props)
		if err == nil || err.Error() != tc.want {
			t.Errorf("New(%v)\n got %v\nwant %s", tc.props, err, tc.want)
		}
	}
}
