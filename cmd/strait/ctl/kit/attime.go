package kit

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// AtTimeSyntax is how help texts name the time form every command takes.
const AtTimeSyntax = "@MILLIS or @RFC3339"

// ParseAtTime reads the one time form of the client commands (consume -o,
// group seek --to, topic trim-prefix -o): "@" then unix milliseconds (a
// Kafka timestamp) or an RFC 3339 time (@2026-01-02T15:04:05Z). ok is
// false when s does not start with "@"; err names what is wrong after it.
func ParseAtTime(s string) (ms int64, ok bool, err error) {
	ts, ok := strings.CutPrefix(s, "@")
	if !ok {
		return 0, false, nil
	}
	if ms, err := strconv.ParseInt(ts, 10, 64); err == nil {
		if ms < 0 {
			return 0, true, fmt.Errorf("%q: a time in milliseconds is not negative", s)
		}
		return ms, true, nil
	}
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return 0, true, fmt.Errorf("%q: after @ give unix milliseconds or an RFC 3339 time (@2026-01-02T15:04:05Z)", s)
	}
	return t.UnixMilli(), true, nil
}
