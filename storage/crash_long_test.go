//go:build long

package storage

import "testing"

// TestCrashAtEveryStepLong is TestCrashAtEveryStep with many more torn-tail
// images per crash point (make test-long).
func TestCrashAtEveryStepLong(t *testing.T) { crashAtEveryStep(t, 40) }
