package replication

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestDescribeLogDirs(t *testing.T) {
	h := newHarness(t)
	h.createTopic("b", topicSpec{partitions: 2})
	h.createTopic("a", topicSpec{})
	h.mustProduce("b", 1, "x", 10, 0)

	req := kmsg.NewPtrDescribeLogDirsRequest()
	req.Version = 4
	resp := h.rm.DescribeLogDirs(context.Background(), req)
	if len(resp.Dirs) != 1 {
		t.Fatalf("%d dirs", len(resp.Dirs))
	}
	d := resp.Dirs[0]
	abs, _ := filepath.Abs(h.dir)
	if d.ErrorCode != 0 || d.Dir != abs || d.TotalBytes <= 0 || d.UsableBytes <= 0 || d.UsableBytes > d.TotalBytes {
		t.Fatalf("dir: %+v", d)
	}
	if len(d.Topics) != 2 || d.Topics[0].Topic != "a" || d.Topics[1].Topic != "b" || len(d.Topics[1].Partitions) != 2 {
		t.Fatalf("topics: %+v", d.Topics)
	}
	p1 := d.Topics[1].Partitions[1]
	wantSize := h.partition("b", 1).Log().Size()
	if p1.Partition != 1 || p1.Size != wantSize || wantSize == 0 || p1.OffsetLag != 0 || p1.IsFuture {
		t.Fatalf("b-1: %+v, want size %d", p1, wantSize)
	}
	if d.Topics[1].Partitions[0].Size != 0 {
		t.Fatalf("empty partition size %d", d.Topics[1].Partitions[0].Size)
	}

	// Only the requested partitions; an empty list asks for none.
	rt := kmsg.NewDescribeLogDirsRequestTopic()
	rt.Topic, rt.Partitions = "b", []int32{1, 7}
	req.Topics = []kmsg.DescribeLogDirsRequestTopic{rt}
	resp = h.rm.DescribeLogDirs(context.Background(), req)
	if tps := resp.Dirs[0].Topics; len(tps) != 1 || len(tps[0].Partitions) != 1 || tps[0].Partitions[0].Partition != 1 {
		t.Fatalf("filtered: %+v", tps)
	}
	req.Topics = []kmsg.DescribeLogDirsRequestTopic{}
	if resp = h.rm.DescribeLogDirs(context.Background(), req); len(resp.Dirs[0].Topics) != 0 {
		t.Fatalf("empty request: %+v", resp.Dirs[0].Topics)
	}
}
