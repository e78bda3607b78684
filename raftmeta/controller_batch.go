package raftmeta

import (
	"context"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
)

// writeItems is the shape CreateTopics, CreatePartitions, AlterConfigs and
// IncrementalAlterConfigs share (Kafka's controller answers each of them
// per item from one ControllerResult): the n items of one request are
// validated against the same image and their records appended in one
// write. An item whose pre error is set (a check that needs no image) is
// skipped; build returns another item's records or its error, given how
// many records the items before it produced; validateOnly appends
// nothing. errs is each item's own error; the answer of an item is
// itemResult(errs[i], werr, built).
func (c *Controller) writeItems(ctx context.Context, pre []*apiError, validateOnly bool,
	build func(img *Image, i, pending int) ([]Record, *apiError)) (errs []*apiError, werr *apiError, built bool) {
	errs = pre
	err := c.write(ctx, func(img *Image) []Record {
		built = true
		var records []Record
		for i := range errs {
			if errs[i] != nil {
				continue
			}
			recs, e := build(img, i, len(records))
			if e != nil {
				errs[i] = e
				continue
			}
			records = append(records, recs...)
		}
		if validateOnly {
			return nil
		}
		return records
	})
	return errs, writeError(err), built
}

// duplicateTopics marks the topics a CreateTopics or CreatePartitions
// request names more than once: each is answered once, INVALID_REQUEST
// "Duplicate topic name.", after the others and sorted by name, as Kafka's
// ControllerApis does. pre is nil for a topic named once, and set for the
// others so that writeItems skips them.
func duplicateTopics(names []string) (pre []*apiError, dups []string) {
	counts := map[string]int{}
	for _, name := range names {
		counts[name]++
	}
	pre = make([]*apiError, len(names))
	for i, name := range names {
		if counts[name] > 1 {
			pre[i] = errorf(kerr.InvalidRequest, "Duplicate topic name.")
		}
	}
	for name, n := range counts {
		if n > 1 {
			dups = append(dups, name)
		}
	}
	sort.Strings(dups)
	return pre, dups
}
