package partition

// Alignment is what PREPARING's log alignment (KIP-1279's LOG_TRUNCATION,
// digest §7.1 step 3) does to a local log: the offsets from From up to the
// log end go. It is the walk a failback runs, computed without running it,
// so a dry run (`strait mirror start --dry-run`) reports exactly what
// TruncateFully or TruncateAfterEpoch would then cut.
type Alignment struct {
	// LME is the last mirrored epoch the source recorded, −1 if none.
	LME int32
	// From is the divergence point: the end offset of the LME in the local
	// epoch cache (the start of the first later epoch), or the log start
	// when the source has no LME (TruncateFully: the whole log goes). It is
	// LogEnd when nothing goes.
	From             int64
	LogStart, LogEnd int64
}

// Truncates reports whether the alignment deletes any offset.
func (a Alignment) Truncates() bool { return a.From < a.LogEnd }

// Full reports whether the source has no LME, so the whole local log is
// replaced (TruncateFully at the source's log start).
func (a Alignment) Full() bool { return a.LME < 0 }

// Align is the walk: with the source's LME and the local log's bounds,
// endOffsetForEpoch (Log.EndOffsetForEpoch, or OffsetForLeaderEpoch on the
// partition leader: the largest epoch ≤ the LME and where it ended; ok false
// when the log knows none) finds the divergence point. Records of epochs ≤
// the LME are the clusters' shared history; the first later epoch on was
// written here alone (digest §7.2). A log that knows no epoch ≤ the LME, or
// whose LME epoch runs to its end, keeps everything.
func Align(lme int32, logStart, logEnd int64, endOffsetForEpoch func(epoch int32) (int32, int64, bool)) Alignment {
	a := Alignment{LME: lme, From: logEnd, LogStart: logStart, LogEnd: logEnd}
	if lme < 0 {
		a.From = min(logStart, logEnd)
		return a
	}
	if _, end, ok := endOffsetForEpoch(lme); ok && end < logEnd {
		a.From = end
	}
	return a
}
