//go:build long

package chaos

import (
	"testing"
	"time"
)

// TestLeaderKillLong is TestLeaderKill with at least 100,000 acknowledged
// records and 30 kills (make test-long).
func TestLeaderKillLong(t *testing.T) {
	leaderKill(t, plan{records: 100_000, minFaults: 30, timeout: 8 * time.Minute})
}

// TestControllerKillLong is TestControllerKill with at least 100,000
// acknowledged records and 20 controller kills (make test-long).
func TestControllerKillLong(t *testing.T) {
	controllerKill(t, plan{records: 100_000, minFaults: 20, timeout: 8 * time.Minute})
}

// TestTransactionKillLong is TestTransactionKill with at least 100,000
// committed records and 30 faults, a third of them coordinators cut off
// from the other nodes rather than killed (make test-long).
func TestTransactionKillLong(t *testing.T) {
	transactionKill(t, plan{records: 100_000, minFaults: 30, timeout: 8 * time.Minute}, true)
}
