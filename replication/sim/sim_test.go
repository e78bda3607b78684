package sim

import (
	"flag"
	"testing"
)

var (
	seedFlag  = flag.Uint64("sim.seed", 0, "run only this seed (0: the range)")
	seedsFlag = flag.Int("sim.seeds", 2000, "how many seeds to run")
	stepsFlag = flag.Int("sim.steps", 200, "random steps per seed")
)

// TestSimulation runs the seeded simulation over many seeds. A failure
// prints the seed; rerun it alone with -sim.seed=N.
func TestSimulation(t *testing.T) {
	runSeeds(t, 1, uint64(*seedsFlag))
}

func runSeeds(t *testing.T, first, count uint64) {
	if *seedFlag != 0 {
		first, count = *seedFlag, 1
	}
	var total Stats
	for seed := first; seed < first+count; seed++ {
		st, err := Run(Options{Seed: seed, Steps: *stepsFlag})
		if err != nil {
			t.Fatalf("%v\nrerun: go test ./replication/sim -run TestSimulation -sim.seed=%d", err, seed)
		}
		total = total.Add(st)
	}
	t.Logf("%d seeds: %+v", count, total)
}
