//go:build long

package partition

import "testing"

// TestSimulationLong runs 10,000 more seeds (make test-long).
func TestSimulationLong(t *testing.T) {
	runSimSeeds(t, 100_001, 10_000)
}
