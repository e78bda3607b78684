package storage

import "sync"

// DefaultRecoveryThreadsPerDataDir is Kafka's default of
// num.recovery.threads.per.data.dir since 4.0 (KIP-1030).
const DefaultRecoveryThreadsPerDataDir = 2

// recoveryThreads is how many logs of one log directory open at start-up,
// or flush and close at shutdown, at once: Kafka's
// num.recovery.threads.per.data.dir. A broker with thousands of partitions
// spends its start in opening (and, after a crash, recovering) their
// segments and its shutdown in fsyncing them, both of which wait on the
// disk more than on a core, so they overlap.
func (o *ManagerOptions) recoveryThreads() int {
	if o.RecoveryThreadsPerDataDir > 0 {
		return o.RecoveryThreadsPerDataDir
	}
	return DefaultRecoveryThreadsPerDataDir
}

// inParallel runs fn(0) ... fn(n-1) on up to threads goroutines and
// returns each call's error at its index.
func inParallel(threads, n int, fn func(i int) error) []error {
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(threads, n) {
		wg.Go(func() {
			for i := range next {
				errs[i] = fn(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return errs
}
