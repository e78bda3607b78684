//go:build long

package storage

import "testing"

// TestCleanerCrashAtEveryStepLong is TestCleanerCrashAtEveryStep at every
// crash point of the workload, with torn-tail images (make test-long).
func TestCleanerCrashAtEveryStepLong(t *testing.T) { cleanerCrashAtEveryStep(t, 8, 1) }

// TestCleanerPropertyLong runs many more, longer seeds of
// TestCleanerProperty (make test-long).
func TestCleanerPropertyLong(t *testing.T) { cleanerProperty(t, 200, 1500) }
