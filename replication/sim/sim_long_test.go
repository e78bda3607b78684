//go:build long

package sim

import "testing"

// TestSimulationLong runs 100,000 seeds after the 2,000 of TestSimulation
// (make test-long).
func TestSimulationLong(t *testing.T) {
	runSeeds(t, 100_001, 100_000)
}
