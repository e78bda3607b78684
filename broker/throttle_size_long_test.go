//go:build long

package broker_test

// The long TestReplicationThrottleCatchUp: a log of a few hundred MB, as
// the issue asks, caught up at 10 MiB/s for about twenty seconds.
const (
	throttleLogBytes = 320 << 20
	throttleRate     = 10 << 20
)
