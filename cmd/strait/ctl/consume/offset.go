package consume

import (
	"fmt"
	"strconv"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/cmd/strait/ctl/kit"
)

// parseOffset reads --offset as rpk and kcat take it: start, end, N (that
// offset), -N (N before the end), @MILLIS or @RFC3339 (the first record at
// or after that time, Kafka's ListOffsets by timestamp).
func parseOffset(s string) (kgo.Offset, error) {
	switch s {
	case "start", "oldest", "beginning":
		return kgo.NewOffset().AtStart(), nil
	case "end", "newest":
		return kgo.NewOffset().AtEnd(), nil
	}
	if ms, ok, err := kit.ParseAtTime(s); ok {
		if err != nil {
			return kgo.Offset{}, fmt.Errorf("--offset %w", err)
		}
		return kgo.NewOffset().AfterMilli(ms), nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return kgo.Offset{}, fmt.Errorf("--offset %q: want start, end, N, -N (N before the end), @MILLIS or @RFC3339", s)
	}
	if n < 0 {
		return kgo.NewOffset().AtEnd().Relative(n), nil
	}
	return kgo.NewOffset().At(n), nil
}

// parsePartitions reads -p 0,2,5.
func parsePartitions(s string) ([]int32, error) {
	if s == "" {
		return nil, nil
	}
	ps, err := kit.ParsePartitions(s)
	if err != nil {
		return nil, fmt.Errorf("--partitions %q: want partition numbers separated by commas (%v)", s, err)
	}
	return ps, nil
}
