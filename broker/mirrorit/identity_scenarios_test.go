package mirrorit

import (
	"testing"
	"time"
)

// mirrorIdentity produces half the records, starts the mirror, produces
// the other half while it runs, waits for lag 0 and checks that the two
// copies of the topic are byte-identical (same topic id, same partition
// count, every batch at the same offset with the same bytes).
func mirrorIdentity(t *testing.T, p *pair, partitions int32, perKind int) {
	t.Helper()
	const topic = "orders"
	p.src.createTopic(t, p.ctx, topic, partitions)
	n := produceMix(t, p.ctx, p.src, topic, partitions, perKind/2, nil)
	p.logf("produced %d records before the start", n)
	p.createMirror()
	p.start(topic)
	n += produceMix(t, p.ctx, p.src, topic, partitions, perKind-perKind/2, nil)
	p.logf("produced %d records in all", n)
	p.waitMirroring(topic, int(partitions), 2*time.Minute)
	r := p.checkIdentity(topic, int64(n))
	t.Logf("counts: produced=%d batches=%d records=%d bytes=%d mismatches=%d missing=%d extra=%d",
		n, r.Batches, r.Records, r.Bytes, r.Mismatches, r.Missing, r.Extra)
}

// TestMirrorIdentity1x1: one source node, one destination node, ≥ 20k
// records from every producer kind.
func TestMirrorIdentity1x1(t *testing.T) {
	t.Parallel()
	p := newPair(t, 3*time.Minute, startOne(t, "source"), startOne(t, "destination"))
	mirrorIdentity(t, p, 4, identityPerKind)
}

// TestMirrorIdentityKfakeSource: franz-go's kfake (three brokers) as the
// source, a Kafka implementation nobody here wrote.
func TestMirrorIdentityKfakeSource(t *testing.T) {
	t.Parallel()
	p := newPair(t, 3*time.Minute, startFake(t, "kfake", 3), startOne(t, "destination"))
	mirrorIdentity(t, p, 3, identityPerKind)
}

// TestMirrorIdentity3x3: three source nodes, three destination nodes,
// replication factor 3 on both.
func TestMirrorIdentity3x3(t *testing.T) {
	t.Parallel()
	p := newPair(t, 3*time.Minute, startThree(t, "source"), startThree(t, "destination"))
	mirrorIdentity(t, p, 3, identity3x3PerKind)
}
