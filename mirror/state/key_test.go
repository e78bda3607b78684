package state

import (
	"testing"

	"github.com/strait-io/strait/coordinator"
	"github.com/strait-io/strait/raftmeta"
)

// TestPartitionForGolden pins the placement of records: a change would
// strand every stored record on a partition its coordinator no longer
// reads. The hashes were checked against Java's String.hashCode
// independently (a Python transcription over UTF-16 code units).
func TestPartitionForGolden(t *testing.T) {
	cases := []struct {
		key         Key
		str         string
		hash        int32
		p50, p1, p7 int32
	}{
		{Key{"m1", ordersID, 0}, "m1:CgECAwQFBgcICQoLDA0ODw:0", -736798082, 32, 0, 6},
		{Key{"m1", ordersID, 1}, "m1:CgECAwQFBgcICQoLDA0ODw:1", -736798081, 31, 0, 5},
		{Key{"m1", ordersID, 2}, "m1:CgECAwQFBgcICQoLDA0ODw:2", -736798080, 30, 0, 4},
		{Key{"m1", ordersID, 3}, "m1:CgECAwQFBgcICQoLDA0ODw:3", -736798079, 29, 0, 3},
		{Key{"m1", paymentsID, 0}, "m1:C__-_fz7-vn49_b19PPy8Q:0", -469189161, 11, 0, 0},
		{Key{"dr-east", paymentsID, 1}, "dr-east:C__-_fz7-vn49_b19PPy8Q:1", -463134624, 24, 0, 1},
		{Key{"", [16]byte{}, 0}, ":AAAAAAAAAAAAAAAAAAAAAA:0", 1006944976, 26, 0, 2},
		{Key{"ミラー", ordersID, 2147483647}, "ミラー:CgECAwQFBgcICQoLDA0ODw:2147483647", 270367500, 0, 0, 4},
		// A character outside the BMP hashes as its two UTF-16 surrogates.
		{Key{"m😀", ordersID, 5}, "m😀:CgECAwQFBgcICQoLDA0ODw:5", 528558807, 7, 0, 0},
	}
	for _, c := range cases {
		if got := c.key.String(); got != c.str {
			t.Errorf("String() = %q, want %q", got, c.str)
		}
		if got := coordinator.JavaStringHashCode(c.str); got != c.hash {
			t.Errorf("hash(%q) = %d, want %d", c.str, got, c.hash)
		}
		for n, want := range map[int32]int32{50: c.p50, 1: c.p1, 7: c.p7} {
			if got := PartitionFor(c.key.Mirror, c.key.TopicID, c.key.Partition, n); got != want {
				t.Errorf("PartitionFor(%s, %d) = %d, want %d", c.str, n, got, want)
			}
			// Same formula as the group coordinator's placement of a group
			// named like the key.
			if got := coordinator.PartitionFor(c.str, n); got != want {
				t.Errorf("coordinator.PartitionFor(%s, %d) = %d, want %d", c.str, n, got, want)
			}
		}
	}
	for m, want := range map[string]int32{"m1": 28, "dr-east": 32, "polygenelubricants": 0} {
		if got := PartitionForMirror(m, 50); got != want {
			t.Errorf("PartitionForMirror(%q, 50) = %d, want %d", m, got, want)
		}
	}
	// "polygenelubricants".hashCode() is Integer.MIN_VALUE: Utils.abs maps
	// it to 0 rather than a negative partition.
	if h := coordinator.JavaStringHashCode("polygenelubricants"); h != -2147483648 {
		t.Errorf("hash = %d", h)
	}
}

func TestCoordinatorFor(t *testing.T) {
	img := raftmeta.EmptyImage()
	if _, ok := CoordinatorFor(img, key(ordersID, 0)); ok {
		t.Fatal("no __mirror_state topic: want no coordinator")
	}
	st := &raftmeta.Topic{Name: raftmeta.MirrorStateTopic}
	for p := int32(0); p < 50; p++ {
		st.Partitions = append(st.Partitions, &raftmeta.Partition{Index: p, Leader: 100 + p})
	}
	st.Partitions[31].Leader = -1
	img.Topics[st.Name] = st
	if id, ok := CoordinatorFor(img, key(ordersID, 0)); !ok || id != 132 { // partition 32
		t.Errorf("CoordinatorFor(orders-0) = %d, %v; want 132", id, ok)
	}
	if id, ok := CoordinatorFor(img, key(ordersID, 1)); ok { // partition 31, offline
		t.Errorf("CoordinatorFor(orders-1) = %d: want none, its partition has no leader", id)
	}
	// The topic's own partition count wins over the configured one.
	st.Partitions = st.Partitions[:7]
	if id, ok := CoordinatorFor(img, key(ordersID, 0)); !ok || id != 106 { // partition 6 of 7
		t.Errorf("CoordinatorFor with 7 partitions = %d, %v; want 106", id, ok)
	}
}
