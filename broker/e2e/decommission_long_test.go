//go:build long

package e2e

import "testing"

// TestDecommissionUnderLoadLong is TestDecommissionUnderLoad with about
// 100 MiB prefilled and a 4 MiB/s throttle: a move long enough (several
// seconds per destination broker) for the throttled rate to settle, the
// figure the done-when asks for.
func TestDecommissionUnderLoadLong(t *testing.T) {
	decommissionUnderLoad(t, 100000, 4<<20)
}
