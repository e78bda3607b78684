package mirrorit

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestSyncShareGroupOffsets: share groups on the source get their
// share-partition start offsets on the destination (KIP-1279 §6, "synced
// the same way" as consumer groups): clamped into the destination's log,
// not for an excluded group, never over a share group consuming on the
// destination; and a KIP-848 consumer group committing on the source is
// synced like a classic one.
func TestSyncShareGroupOffsets(t *testing.T) {
	t.Parallel()
	p := newPair(t, 60*time.Second, startOne(t, "source"), startOne(t, "destination"))
	const topic, partitions, perPartition = "jobs", 2, 40
	p.src.createTopic(t, p.ctx, topic, partitions)
	writeEach(t, p, p.src, topic, partitions, perPartition, "s")
	p.createMirror(syncInterval, "mirror.groups.exclude=skip.*")
	p.start(topic)
	p.waitMirroring(topic, partitions, 20*time.Second)

	src, dst := p.src.admin(t), p.dst.admin(t)
	alter := func(adm *kadm.Client, group string, offs map[int32]int64) {
		t.Helper()
		var os kadm.Offsets
		for part, at := range offs {
			os.Add(kadm.Offset{Topic: topic, Partition: part, At: at, LeaderEpoch: -1})
		}
		resp, err := adm.AlterShareGroupOffsets(p.ctx, group, os)
		if err == nil {
			err = resp.Error()
		}
		if err != nil {
			t.Fatalf("alter share group %s: %v", group, err)
		}
	}
	// busy consumes on the destination first: a member of the share group
	// there.
	busy := p.dst.client(t, kgo.ShareGroup("busy"), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(100*time.Millisecond))
	p.waitFor(20*time.Second, "busy to be active on the destination", func() string {
		pctx, cancel := context.WithTimeout(p.ctx, 100*time.Millisecond)
		busy.PollFetches(pctx)
		cancel()
		listed, err := dst.ListGroupsByType(p.ctx, []string{"share"})
		if err != nil {
			return err.Error()
		}
		if l := listed["busy"]; l.State != "Stable" {
			return fmt.Sprintf("busy %+v", l)
		}
		return ""
	})

	// Only now that busy is active on the destination does the source
	// have a busy group: no round could copy it while it was not.
	alter(src, "sg1", map[int32]int64{0: 12, 1: 30})
	alter(src, "skip-share", map[int32]int64{0: 5, 1: 5})
	alter(src, "busy", map[int32]int64{0: 3, 1: 3})

	// A KIP-848 consumer group of the source, committing.
	cg := p.src.client(t, kgo.ConsumerGroup("cg848"), kgo.ConsumeTopics(topic), kgo.ServerSideBalancer(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond), kgo.DisableAutoCommit())
	for read := 0; read < partitions*perPartition; {
		fs := cg.PollFetches(p.ctx)
		if p.ctx.Err() != nil {
			t.Fatalf("cg848 read %d: %v", read, p.ctx.Err())
		}
		read += fs.NumRecords()
	}
	if err := cg.CommitUncommittedOffsets(p.ctx); err != nil {
		t.Fatal(err)
	}
	cg.Close()

	starts := func(group string) map[int32]int64 {
		out := map[int32]int64{}
		d, err := dst.DescribeShareGroupOffsets(p.ctx, group)
		if err != nil {
			return out
		}
		for part, o := range d[group].Offsets[topic] {
			if o.Err == nil {
				out[part] = o.StartOffset
			}
		}
		return out
	}
	p.waitFor(20*time.Second, "sg1's start offsets and cg848's commits on the destination", func() string {
		if got := starts("sg1"); got[0] != 12 || got[1] != 30 {
			return fmt.Sprintf("sg1 %v", got)
		}
		os, err := dst.FetchOffsets(p.ctx, "cg848")
		if err != nil {
			return err.Error()
		}
		for part := int32(0); part < partitions; part++ {
			if o, ok := os.Lookup(topic, part); !ok || o.At != perPartition {
				return fmt.Sprintf("cg848 %v", os)
			}
		}
		return ""
	})
	time.Sleep(1200 * time.Millisecond) // several more rounds
	if got := starts("skip-share"); len(got) != 0 {
		t.Errorf("excluded share group synced: %v", got)
	}
	if got := starts("busy"); got[0] == 3 || got[1] == 3 {
		t.Errorf("the share group consuming on the destination was overwritten: %v", got)
	}
}
