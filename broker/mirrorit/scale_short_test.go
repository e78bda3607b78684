//go:build !long

package mirrorit

// Sizes of the default run: `make test` runs every package with -race on
// two cores, and this package must stay under four minutes there. The
// identity checks keep their 20k records on single nodes; the three-node
// runs use fewer (see scale_long_test.go for the long run).
const (
	// identityPerKind × 6 producer kinds ≥ 20k records (1+1, kfake).
	identityPerKind = 3400
	// identity3x3PerKind × 6: the 3+3 identity check.
	identity3x3PerKind = 400
	// faultsPhase is how long the producers run between faults (3+3).
	faultsPhase = 1500 // ms
)
