package validator

import "math"

// timestampInRange applies message.timestamp.before.max.ms and
// message.timestamp.after.max.ms (LogValidator.recordHasInvalidTimestamp)
// and returns the accepted range for the error message. Kafka computes
// now - ts in a long, which wraps for timestamps near the int64 limits; the
// comparison here is exact.
func timestampInRange(ts, now int64, cfg Config) (lo, hi int64, ok bool) {
	lo, hi = satSub(now, cfg.TimestampBeforeMaxMs), satAdd(now, cfg.TimestampAfterMaxMs)
	return lo, hi, ts >= lo && ts <= hi
}

func satAdd(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	if b < 0 && a < math.MinInt64-b {
		return math.MinInt64
	}
	return a + b
}

func satSub(a, b int64) int64 {
	if b == math.MinInt64 {
		if a >= 0 {
			return math.MaxInt64
		}
		return a - b
	}
	return satAdd(a, -b)
}
