package lag

import (
	"fmt"
	"strings"
)

// Bound is a failover's recovery point objective (issue 27's RPO guard):
// the most lag a stop may abandon. A stop (`strait mirror stop
// --max-lag-ms/--max-lag-records`, or the mirror config
// mirror.failover.max.lag.ms) refuses a topic with a partition over it
// unless forced. The lag is this package's: Records and Ms as describe
// measures them at the moment of the stop.
type Bound struct {
	// Records and Ms are the most lag accepted, Unknown (-1) for no
	// bound of that kind.
	Records, Ms int64
}

// NoBound bounds nothing.
var NoBound = Bound{Records: Unknown, Ms: Unknown}

// Active reports whether b bounds anything.
func (b Bound) Active() bool { return b.Records >= 0 || b.Ms >= 0 }

// Exceeded reports whether a partition with lag records and age ms (each
// Unknown when not known) is over b. An unknown lag is over any bound of
// its kind: a source that cannot be measured (it is down) may hold any
// number of records the destination never got, and a guard that let it
// pass would fail open exactly when a failover is most likely. A lag of 0
// records has an age of 0 whatever ms says.
func (b Bound) Exceeded(records, ms int64) bool {
	if !b.Active() {
		return false
	}
	if records < 0 {
		return true
	}
	if b.Records >= 0 && records > b.Records {
		return true
	}
	if b.Ms >= 0 && records > 0 && (ms < 0 || ms > b.Ms) {
		return true
	}
	return false
}

// String names the bound for messages: "100 records, 5000 ms".
func (b Bound) String() string {
	var parts []string
	if b.Records >= 0 {
		parts = append(parts, fmt.Sprintf("%d records", b.Records))
	}
	if b.Ms >= 0 {
		parts = append(parts, fmt.Sprintf("%d ms", b.Ms))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// Describe says a partition's lag for a message: "120 records, 5300 ms",
// "unknown" when the records are not known, "120 records, unknown ms".
func Describe(records, ms int64) string {
	if records < 0 {
		return "unknown"
	}
	if ms < 0 {
		return fmt.Sprintf("%d records, unknown ms", records)
	}
	return fmt.Sprintf("%d records, %d ms", records, ms)
}
