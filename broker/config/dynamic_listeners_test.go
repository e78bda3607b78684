package config

import (
	"maps"
	"strings"
	"testing"
)

// An alteration of the listener keys is checked as Kafka checks the new
// configuration before it reconfigures its listeners; Strait then stores
// the values and ignores them.
func TestValidateListenerChange(t *testing.T) {
	c, err := New(nil) // PLAINTEXT://127.0.0.1:9092, CONTROLLER://127.0.0.1:9093
	if err != nil {
		t.Fatal(err)
	}
	const withExternal = "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,EXTERNAL:SSL"
	for _, tc := range []struct {
		dynamic map[string]string
		key     string
		msg     string
	}{
		{map[string]string{}, "", ""},
		{map[string]string{"max.connections": "10"}, "", ""},
		{map[string]string{"advertised.listeners": "PLAINTEXT://broker1.example:19092"}, "", ""},
		{map[string]string{"listeners": "PLAINTEXT://:9092,CONTROLLER://:9093,EXTERNAL://:9094", "listener.security.protocol.map": withExternal}, "", ""},
		// Every listener named in listener.security.protocol.map.
		{map[string]string{"listeners": "PLAINTEXT://:9092,CONTROLLER://:9093,EXTERNAL://:9094"}, "listeners",
			"No security protocol defined for listener EXTERNAL"},
		{map[string]string{"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT"}, "listener.security.protocol.map",
			"No security protocol defined for listener CONTROLLER"},
		// Distinct names and ports.
		{map[string]string{"listeners": "PLAINTEXT://:9092,PLAINTEXT://:9094,CONTROLLER://:9093"}, "listeners",
			"Each listener must have a different name, listeners: PLAINTEXT://:9092,PLAINTEXT://:9094,CONTROLLER://:9093"},
		{map[string]string{"listeners": "PLAINTEXT://:9092,CONTROLLER://:9092"}, "listeners",
			"Each listener must have a different port unless exactly one listener has an IPv4 address and the other IPv6 address, listeners: PLAINTEXT://:9092,CONTROLLER://:9092, port: 9092"},
		// The inter-broker listener stays.
		{map[string]string{"listeners": "EXTERNAL://:9094,CONTROLLER://:9093", "listener.security.protocol.map": withExternal}, "listeners",
			"inter.broker.listener.name must be a listener name defined in advertised.listeners. The valid options based on currently configured listeners are EXTERNAL"},
		{map[string]string{"advertised.listeners": "PLAINTEXT://h:1,EXTERNAL://h:2", "listener.security.protocol.map": withExternal}, "advertised.listeners",
			"advertised.listeners listener names must be equal to or a subset of the ones defined in listeners. Found EXTERNAL"},
		// The controller listener stays (a combined node).
		{map[string]string{"listeners": "PLAINTEXT://:9092"}, "listeners",
			"controller.listener.names must contain at least one value appearing in the 'listeners' configuration when running the KRaft controller role"},
		// DynamicListenerConfig: an existing listener keeps its protocol.
		{map[string]string{"listener.security.protocol.map": "PLAINTEXT:SSL,CONTROLLER:PLAINTEXT"}, "listener.security.protocol.map",
			"Security protocol cannot be updated for existing listener PLAINTEXT"},
	} {
		key, err := c.ValidateListenerChange(c.Sources(nil, nil), c.Sources(nil, tc.dynamic))
		if tc.msg == "" {
			if err != nil || key != "" {
				t.Errorf("%v: %s %v", tc.dynamic, key, err)
			}
			continue
		}
		if err == nil || key != tc.key || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%v: got %s %v, want %s %q", tc.dynamic, key, err, tc.key, tc.msg)
		}
	}
	// A change is compared with the configuration as it stands, dynamic
	// values included.
	now := c.Sources(nil, map[string]string{"advertised.listeners": "PLAINTEXT://h:1"})
	if key, err := c.ValidateListenerChange(now, now); key != "" || err != nil {
		t.Errorf("unchanged: %s %v", key, err)
	}
	if key, err := c.ValidateListenerChange(now, c.Sources(nil, nil)); key != "" || err != nil {
		t.Errorf("deleted: %s %v", key, err)
	}
	external := map[string]string{"listeners": "PLAINTEXT://:9092,CONTROLLER://:9093,EXTERNAL://:9094", "listener.security.protocol.map": withExternal}
	now = c.Sources(nil, external)
	next := maps.Clone(external)
	next["listener.security.protocol.map"] = "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,EXTERNAL:PLAINTEXT"
	if key, err := c.ValidateListenerChange(now, c.Sources(nil, next)); key != "listener.security.protocol.map" ||
		err == nil || err.Error() != "Security protocol cannot be updated for existing listener EXTERNAL" {
		t.Errorf("a dynamic listener's protocol changed: %s %v", key, err)
	}
}
