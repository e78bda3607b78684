package fetcher

import (
	"context"
	"time"
)

// DoWork runs one round through the endpoint (Kafka's doWork): a
// truncation round if any partition is truncating, then a fetch and the
// offset resets it asks for. It reports whether it sent a fetch; false
// means there was nothing ready and the caller should wait.
func (f *Fetcher) DoWork(ctx context.Context) bool {
	if f.cfg.AwaitMetadata != nil {
		f.cfg.AwaitMetadata(ctx)
	}
	if req := f.PollTruncation(); req != nil {
		answers, err := f.ep.FetchEpochEndOffsets(ctx, req.Partitions)
		if ctx.Err() != nil {
			return false
		}
		f.CompleteTruncation(req, answers, err)
	}
	req := f.PollFetch()
	if req == nil {
		return false
	}
	resp, err := f.ep.Fetch(ctx, req)
	if ctx.Err() != nil {
		return false
	}
	for _, r := range f.CompleteFetch(req, resp, err) {
		// Kafka asks for the latest offset first and for the earliest
		// only when the replica is not ahead; asking both keeps the
		// decision in one pure function (ResetFetchOffset).
		end, err := f.ep.FetchLatestOffset(ctx, r.TP, r.CurrentLeaderEpoch)
		var start OffsetAndEpoch
		if err == nil {
			start, err = f.ep.FetchEarliestOffset(ctx, r.TP, r.CurrentLeaderEpoch)
		}
		if ctx.Err() != nil {
			return false
		}
		f.CompleteOffsetReset(r, start, end, err)
	}
	return true
}

// Run fetches until ctx ends (Kafka's ShutdownableThread loop). When
// nothing is ready it sleeps until a delayed partition is due, for at most
// the backoff, or until partitions are added.
func (f *Fetcher) Run(ctx context.Context) {
	for ctx.Err() == nil {
		if f.DoWork(ctx) {
			continue
		}
		t := time.NewTimer(f.idleWait())
		select {
		case <-ctx.Done():
		case <-f.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// idleWait is how long an idle fetcher sleeps: until the first delayed
// partition is due, at most the backoff.
func (f *Fetcher) idleWait() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.cfg.Clock.Now()
	wait := f.cfg.Backoff
	for _, st := range f.states {
		if st.IsDelayed(now) {
			wait = min(wait, st.DelayedUntil.Sub(now))
		} else if st.Phase == Fetching || st.Phase == Truncating {
			// Ready but nothing was sent (a race with AddPartitions,
			// or the follower throttle held it back): look again soon.
			wait = min(wait, 10*time.Millisecond)
		}
	}
	return max(wait, time.Millisecond)
}
