//go:build long

package mirrorit

// Sizes of `make test-long`: the 3+3 identity check with 20k records and
// longer phases between faults.
const (
	identityPerKind    = 3400
	identity3x3PerKind = 3400
	faultsPhase        = 5000 // ms
)
