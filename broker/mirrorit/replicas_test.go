package mirrorit

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/strait-io/strait/broker"
	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/record"
)

// shape is the size of both Strait clusters of a scenario: 1+1 (single
// nodes, replication factor 1) or 3+3 (three nodes each, replication
// factor 3, min.insync.replicas 2; see startThree).
type shape struct {
	name  string
	nodes int
}

// The 3+3 variants of failover, failback and read-only do not call
// t.Parallel: go test runs them one after the other before the parallel
// tests, each alone on the machine. Two pairs of three-node clusters at
// once under -race on two cores starve the raft heartbeats (controller
// elections one after the other, admin requests answered NOT_CONTROLLER)
// and each test takes several times longer; alone they take 4-10 s.
var (
	oneAndOne     = shape{"1+1", 1}
	threeAndThree = shape{"3+3", 3}
)

// start starts one cluster of the shape.
func (sh shape) start(t *testing.T, name string, opts ...brokertest.Option) *side {
	t.Helper()
	if sh.nodes == 1 {
		return startOne(t, name, opts...)
	}
	return startThree(t, name, opts...)
}

// image is the newest metadata image of a Strait side.
func (s *side) image() *raftmeta.Image {
	if s.many != nil {
		return s.many.Image()
	}
	if n := s.one.Node(); n != nil {
		return n.Image()
	}
	return nil
}

// node is the running node id of a Strait side (nil when it is down).
func (s *side) node(id int32) *broker.Node {
	if s.many != nil {
		return s.many.Node(id).Node()
	}
	return s.one.Node()
}

// replicaReport is what checkReplicas compared: every replica of every
// partition, read from the node's own log (not through Fetch, which only
// the leader answers), against the leader's copy read through Fetch.
type replicaReport struct {
	// Partitions checked; Replicas is the number of replica logs read
	// (partitions × replication factor when all is well).
	Partitions, Replicas int
	// WrongRF counts partitions whose replica set is not the expected
	// replication factor.
	WrongRF int
	// Batches, Mismatches, Missing, Extra add up the comparison of every
	// replica against the leader's copy, as Report counts them.
	Batches, Mismatches, Missing, Extra int
	// Resets counts the MIRROR_PID_RESET batches over every replica below
	// the high watermark.
	Resets int
	// Unreadable counts replicas whose log could not be read up to the
	// high watermark in time (no log, behind, failed read).
	Unreadable int
	Examples   []string
}

func (r *replicaReport) String() string {
	return fmt.Sprintf("partitions=%d replicas=%d wrong-rf=%d batches=%d mismatches=%d missing=%d extra=%d resets=%d unreadable=%d",
		r.Partitions, r.Replicas, r.WrongRF, r.Batches, r.Mismatches, r.Missing, r.Extra, r.Resets, r.Unreadable)
}

func (r *replicaReport) note(format string, args ...any) {
	if len(r.Examples) < maxExamples {
		r.Examples = append(r.Examples, fmt.Sprintf(format, args...))
	}
}

// checkReplicas reads every replica of every partition of topic on s from
// the replica's own log, from the log start offset to the high watermark
// of leaderCopy (the copy readTopic fetched from the leaders), and
// compares it batch by batch and byte by byte with leaderCopy. A replica
// is given up to timeout to catch up to that high watermark (a follower
// out of the ISR may lag). The replication factor of every partition must
// be rf. Used to prove that what the mirror leader appended through the
// follower path (and the MIRROR_PID_RESET barrier, and truncations on
// failback) reached every destination replica, not only the leader.
func checkReplicas(t testing.TB, s *side, topic string, leaderCopy *topicLog, rf int, timeout time.Duration) *replicaReport {
	t.Helper()
	r := &replicaReport{}
	img := s.image()
	tp, ok := img.Topics[topic]
	if !ok {
		t.Fatalf("%s: %s not in the metadata image", s.name, topic)
	}
	dec := record.NewDecompressor()
	for _, pt := range tp.Partitions {
		part := pt.Index
		r.Partitions++
		if len(pt.Replicas) != rf {
			r.WrongRF++
			r.note("p%d: replicas %v, want replication factor %d", part, pt.Replicas, rf)
		}
		want, hw, start := leaderCopy.partitions[part], leaderCopy.hw[part], leaderCopy.logStart[part]
		for _, id := range slices.Sorted(slices.Values(pt.Replicas)) {
			r.Replicas++
			got, err := readReplica(s, id, storage.TopicPartition{Topic: topic, Partition: part}, start, hw, timeout)
			if err != nil {
				r.Unreadable++
				r.note("p%d replica %d: %v", part, id, err)
				continue
			}
			cmp := &Report{}
			cmp.ComparePartition(part, want, got)
			r.Batches += cmp.Batches
			r.Mismatches += cmp.Mismatches
			r.Missing += cmp.Missing
			r.Extra += cmp.Extra
			for _, e := range cmp.Examples {
				r.note("replica %d: %s", id, e)
			}
			for _, b := range got {
				if dec.IsMirrorPidReset(b) {
					r.Resets++
				}
			}
		}
	}
	return r
}

// readReplica reads node id's own log of tp from start up to hw, after
// waiting (up to timeout) until the node has the log, its log end offset
// has reached hw and its log start offset is start.
func readReplica(s *side, id int32, tp storage.TopicPartition, start, hw int64, timeout time.Duration) ([]record.Batch, error) {
	deadline := time.Now().Add(timeout)
	var l *storage.Log
	for {
		why := ""
		n := s.node(id)
		switch {
		case n == nil:
			why = "node not running"
		default:
			var ok bool
			if l, ok = n.LogManager().Log(tp); !ok {
				why = "no log"
			} else if leo, ls := l.LogEndOffset(), l.LogStartOffset(); leo < hw || ls != start {
				why = fmt.Sprintf("log [%d, %d), the leader's copy [%d, %d)", ls, leo, start, hw)
			}
		}
		if why == "" {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("after %v: %s", timeout, why)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var out []record.Batch
	for off := start; off < hw; {
		info, err := l.Read(off, readPartitionMaxBytes, storage.FetchLogEnd, true)
		if err != nil {
			return nil, fmt.Errorf("read at %d: %w", off, err)
		}
		buf := make([]byte, info.Records.Size)
		if err := info.Records.ReadInto(buf); err != nil {
			return nil, fmt.Errorf("read at %d: %w", off, err)
		}
		before := off
		if out, off, err = appendFetched(out, buf, off, hw); err != nil {
			return nil, err
		}
		if off == before {
			return nil, fmt.Errorf("no whole batch at offset %d below the high watermark %d", off, hw)
		}
	}
	return out, nil
}

// assertReplicas fails the test unless every replica has the expected
// replication factor, was read, and equals the leader's copy, and the
// replicas hold wantResets MIRROR_PID_RESET batches in all (-1: any).
func assertReplicas(t testing.TB, what string, r *replicaReport, partitions, rf, wantResets int) {
	t.Helper()
	for _, e := range r.Examples {
		t.Errorf("%s: %s", what, e)
	}
	if r.Partitions != partitions || r.Replicas != partitions*rf || r.WrongRF != 0 || r.Unreadable != 0 ||
		r.Mismatches != 0 || r.Missing != 0 || r.Extra != 0 || r.Batches == 0 {
		t.Errorf("%s: replicas differ from the leader's copy: %v (want %d partitions × %d replicas)", what, r, partitions, rf)
	}
	if wantResets >= 0 && r.Resets != wantResets {
		t.Errorf("%s: %d MIRROR_PID_RESET batches over every replica, want exactly %d", what, r.Resets, wantResets)
	}
}
