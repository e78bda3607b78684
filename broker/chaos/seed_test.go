package chaos

import (
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"
)

// seedEnv names the environment variable that replays a run's fault
// schedule.
const seedEnv = "STRAIT_CHAOS_SEED"

// newRand returns the test's random source, seeded from STRAIT_CHAOS_SEED
// or the clock, and logs the seed so a failure can be replayed.
func newRand(t testing.TB) *rand.Rand {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(seedEnv); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", seedEnv, s, err)
		}
		seed = v
	}
	t.Logf("seed %d (replay with %s=%d)", seed, seedEnv, seed)
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// between is a random duration in [lo, hi).
func between(rng *rand.Rand, lo, hi time.Duration) time.Duration {
	return lo + time.Duration(rng.Int64N(int64(hi-lo)))
}
