package kit

import (
	"fmt"
	"strconv"
	"strings"
)

// ParsePartitions reads comma-separated partition numbers ("0,2,5"), the
// form every command's partition flag takes; the error names the part
// that is not one.
func ParsePartitions(s string) ([]int32, error) {
	var ps []int32
	for _, f := range strings.Split(s, ",") {
		p, err := strconv.ParseInt(strings.TrimSpace(f), 10, 32)
		if err != nil || p < 0 {
			return nil, fmt.Errorf("partition %q is not a number", f)
		}
		ps = append(ps, int32(p))
	}
	return ps, nil
}
