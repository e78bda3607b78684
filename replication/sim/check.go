package sim

import (
	"fmt"
	"io"

	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/record"
)

// committedBatch is a batch of the committed log: below some replica's
// high watermark, so it must never change.
type committedBatch struct {
	base, last int64
	epoch      int32
	crc        uint32
}

// committedLog is what every replica's log must agree with below its
// high watermark. It is learned from the replicas themselves: the first
// replica to show a batch below its high watermark defines it.
type committedLog struct {
	batches []committedBatch
	values  map[int64]string
	end     int64
}

// batchAt finds the committed batch starting at base.
func (g *committedLog) batchAt(base int64) (committedBatch, bool) {
	lo, hi := 0, len(g.batches)
	for lo < hi {
		m := (lo + hi) / 2
		switch {
		case g.batches[m].base < base:
			lo = m + 1
		case g.batches[m].base > base:
			hi = m
		default:
			return g.batches[m], true
		}
	}
	return committedBatch{}, false
}

// readBatches returns the whole batches of l from offset up to (not
// including) end.
func readBatches(l *storage.Log, from, end int64) ([]record.Batch, error) {
	var out []record.Batch
	for off := from; off < end; {
		info, err := l.Read(off, 1<<20, storage.FetchLogEnd, true)
		if err != nil {
			return nil, err
		}
		buf := make([]byte, info.Records.Size)
		if err := info.Records.ReadInto(buf); err != nil {
			return nil, err
		}
		it := record.NewIter(buf)
		progressed := false
		for b, ok := it.Next(); ok; b, ok = it.Next() {
			if b.BaseOffset() >= end {
				return out, nil
			}
			out = append(out, b)
			off, progressed = b.NextOffset(), true
		}
		if err := it.Err(); err != nil {
			return nil, err
		}
		if !progressed {
			return nil, fmt.Errorf("no batch at offset %d", off)
		}
	}
	return out, nil
}

func batchValues(b record.Batch) ([]string, error) {
	rr := record.NewUncompressedReader(b)
	var out []string
	for {
		r, err := rr.Next(true)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, string(r.Value))
	}
}

// checkNode checks a running node: its high watermark did not go down,
// and its log below it is the committed log (extending it where it is the
// first to get there).
func (c *Cluster) checkNode(n *node) error {
	p, ok := n.partition()
	if !ok {
		return nil
	}
	l := p.Log()
	if leo := l.LogEndOffset(); leo < n.lastLEO {
		c.stats.Truncations++
		c.tracef("node %d: log truncated from %d to %d", n.id, n.lastLEO, leo)
	}
	n.lastLEO = l.LogEndOffset()
	hw := l.HighWatermark()
	if hw < n.lastHW {
		return fmt.Errorf("node %d: the high watermark went down from %d to %d", n.id, n.lastHW, hw)
	}
	n.lastHW = hw
	n.verified = max(n.verified, l.LogStartOffset())
	if hw <= n.verified {
		return nil
	}
	batches, err := readBatches(l, n.verified, hw)
	if err != nil {
		return fmt.Errorf("node %d: reading [%d, %d): %w", n.id, n.verified, hw, err)
	}
	g := &c.committed
	for _, b := range batches {
		if b.LastOffset() >= hw {
			break // the high watermark is inside it (not in practice)
		}
		cb := committedBatch{base: b.BaseOffset(), last: b.LastOffset(), epoch: b.PartitionLeaderEpoch(), crc: b.CRC()}
		if b.BaseOffset() < g.end {
			want, ok := g.batchAt(b.BaseOffset())
			if !ok || want != cb {
				return fmt.Errorf("node %d: batch at %d (epoch %d, last %d) differs from the committed one %+v (found %v) below its HW %d",
					n.id, b.BaseOffset(), cb.epoch, cb.last, want, ok, hw)
			}
		} else {
			if len(g.batches) == 0 {
				g.end = b.BaseOffset() // a log that starts later (deleted records)
			}
			if b.BaseOffset() != g.end {
				return fmt.Errorf("node %d: batch at %d leaves a gap after the committed end %d", n.id, b.BaseOffset(), g.end)
			}
			vals, err := batchValues(b)
			if err != nil {
				return fmt.Errorf("node %d: decoding the batch at %d: %w", n.id, b.BaseOffset(), err)
			}
			for i, v := range vals {
				g.values[b.BaseOffset()+int64(i)] = v
			}
			g.batches = append(g.batches, cb)
			g.end = b.NextOffset()
			c.tracef("committed [%d, %d] epoch %d (seen on node %d)", cb.base, cb.last, cb.epoch, n.id)
		}
		n.verified = b.NextOffset()
	}
	return nil
}

// checkAcked: every acknowledged record is committed, at its offset.
func (c *Cluster) checkAcked() error {
	for _, a := range c.acked[c.ackedChecked:] {
		if got, ok := c.committed.values[a.offset]; !ok || got != a.value {
			return fmt.Errorf("acknowledged %s at %d is not committed there (committed end %d, found %q)", a.value, a.offset, c.committed.end, got)
		}
	}
	c.ackedChecked = len(c.acked)
	return nil
}

// check runs the invariants after a step.
func (c *Cluster) check() error {
	for _, n := range c.nodes {
		if err := c.checkNode(n); err != nil {
			return err
		}
	}
	return c.checkAcked()
}

// checkFinal: after healing, every replica has the same log, which is the
// committed log with every acknowledged record once.
func (c *Cluster) checkFinal() error {
	leader := c.ctrl.partition().Leader
	ln := c.node(leader)
	lp, ok := ln.partition()
	if !ok {
		return fmt.Errorf("the leader %d has no replica", leader)
	}
	end := lp.Log().LogEndOffset()
	if c.committed.end != end {
		return fmt.Errorf("committed end %d, leader's log end %d", c.committed.end, end)
	}
	for _, n := range c.nodes {
		p, ok := n.partition()
		if !ok {
			return fmt.Errorf("node %d is down after healing", n.id)
		}
		if p.Log().LogEndOffset() != end || p.HighWatermark() != end || n.verified != end {
			return fmt.Errorf("node %d: LEO %d HW %d verified %d, want all %d", n.id, p.Log().LogEndOffset(), p.HighWatermark(), n.verified, end)
		}
	}
	seen := map[string]int64{}
	for off, v := range c.committed.values {
		if prev, dup := seen[v]; dup {
			return fmt.Errorf("%s is in the log twice, at %d and %d", v, prev, off)
		}
		seen[v] = off
	}
	return c.checkAcked()
}
