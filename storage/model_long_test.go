//go:build long

package storage

import "testing"

// TestLogModelLong is the long run of the model-based test (make
// test-long): more seeds, starting after the default run's, and longer
// operation sequences, which reach deeper states (many rolls, repeated
// crashes, retention over transactions).
func TestLogModelLong(t *testing.T) {
	runLogModel(t, 1_000_001, 5000, 200)
}
