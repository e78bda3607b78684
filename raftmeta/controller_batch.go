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

// writeTopics is writeItems for the topics of a CreateTopics or
// CreatePartitions request, named by names. A topic named more than once
// is answered once, INVALID_REQUEST "Duplicate topic name.", after the
// others and sorted by name, as Kafka's ControllerApis does, and is not
// built; answer is called for each other topic in request order with its
// index i, then for each duplicated name with i = -1.
func (c *Controller) writeTopics(ctx context.Context, names []string, validateOnly bool,
	build func(img *Image, i, pending int) ([]Record, *apiError), answer func(i int, name string, code int16, msg *string)) {
	counts := map[string]int{}
	for _, name := range names {
		counts[name]++
	}
	dup := errorf(kerr.InvalidRequest, "Duplicate topic name.")
	pre := make([]*apiError, len(names))
	var dups []string
	for i, name := range names {
		if counts[name] > 1 {
			pre[i] = dup
		}
	}
	for name, n := range counts {
		if n > 1 {
			dups = append(dups, name)
		}
	}
	sort.Strings(dups)
	errs, werr, built := c.writeItems(ctx, pre, validateOnly, build)
	for i, name := range names {
		if errs[i] != dup {
			code, msg := itemResult(errs[i], werr, built)
			answer(i, name, code, msg)
		}
	}
	for _, name := range dups {
		answer(-1, name, dup.code, dup.message())
	}
}
