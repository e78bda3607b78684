package ctrlrpc

import "testing"

func TestForwardIDInClientID(t *testing.T) {
	id := ForwardID{Node: 3, Session: 1<<64 - 1, Seq: 42}
	base, got := splitForwardID(id.clientID(NodeClientID(3)))
	if base != NodeClientID(3) || got != id {
		t.Fatalf("split: %q %+v", base, got)
	}
	for _, s := range []string{"strait-node-3", "strait-node-3;fwd=", "strait-node-3;fwd=1", "strait-node-3;fwd=1.2x", "tool;fwd=1.2", "strait-node-3;fwd=01.2"} {
		if b, got := splitForwardID(s); !got.IsZero() || b != s {
			t.Errorf("%q split into %q %+v", s, b, got)
		}
	}
}
