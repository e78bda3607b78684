//go:build !long

package broker_test

// The lean TestReplicationThrottleCatchUp: 64 MB caught up at 4 MiB/s for
// about ten seconds.
const (
	throttleLogBytes = 64 << 20
	throttleRate     = 4 << 20
)
