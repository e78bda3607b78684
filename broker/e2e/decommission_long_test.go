//go:build long

package e2e

import "testing"

// TestDecommissionUnderLoadLong is TestDecommissionUnderLoad with about
// 200 MiB prefilled and an 8 MiB/s throttle: the same bound asserted over a
// longer move (about 8 s per destination broker).
func TestDecommissionUnderLoadLong(t *testing.T) {
	decommissionUnderLoad(t, 200000, 8<<20)
}
