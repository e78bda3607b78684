package raftmeta

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/hashicorp/raft"
)

// TestFSMMirrors replays mirror records (testdata/fsm_mirrors) as TestFSM
// does the others: the delta and image of each batch, the batches the FSM
// refuses, and snapshots that restore mirrors and their configs.
func TestFSMMirrors(t *testing.T) {
	st := &fsmState{fsm: NewFSM("test-cluster", nil)}
	st.fsm.Subscribe(func(d *Delta, _ *Image) { st.deltas = append(st.deltas, d) })
	datadriven.RunTest(t, "testdata/fsm_mirrors", func(t *testing.T, td *datadriven.TestData) string {
		return st.cmd(t, td)
	})
}

// formatMirrorDelta is the mirrors part of a delta line, empty when the
// delta has none (so the other testdata is unchanged).
func formatMirrorDelta(d *Delta) string {
	if len(d.CreatedMirrors) == 0 && len(d.DeletedMirrors) == 0 {
		return ""
	}
	names := func(ms []*Mirror) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.Name+"#"+strings.TrimPrefix(fmtID(m.ID), "#"))
		}
		return out
	}
	return fmt.Sprintf(" mirrors-created=%v mirrors-deleted=%v", names(d.CreatedMirrors), names(d.DeletedMirrors))
}

// formatMirrors lists an image's mirrors, and each one's topics as
// Image.MirrorTopics sees them.
func formatMirrors(img *Image) string {
	var b strings.Builder
	for _, name := range img.MirrorNames() {
		m := img.Mirrors[name]
		var topics []string
		for _, mt := range img.MirrorTopics(name) {
			topics = append(topics, mt.Topic.Name+":"+mt.Desired.String())
		}
		fmt.Fprintf(&b, "mirror %s id=%s created=%d topics=%v\n", m.Name, fmtID(m.ID), m.CreateTimeMs, topics)
	}
	return b.String()
}

// TestFSMMirrorsDoNotMutatePublishedImages: batches that create, configure
// and remove mirrors leave the images published before them unchanged.
func TestFSMMirrorsDoNotMutatePublishedImages(t *testing.T) {
	f := NewFSM("c", nil)
	batches := [][]string{
		{"mirror name=a id=1 time=5", "config type=mirror name=a key=bootstrap.servers value=h:1"},
		{"mirror name=b id=2", "config type=mirror name=a key=bootstrap.servers value=h:2", "config type=mirror name=b key=x value=y",
			"topic name=t id=9", "config type=topic name=t key=mirror.name value=a"},
		{"remove-mirror id=1", "mirror name=a id=3", "config type=topic name=t key=mirror.name value=a.removed"},
		{"remove-mirror id=2", "config type=mirror name=a key=bootstrap.servers"},
	}
	for i, lines := range batches {
		var records []Record
		for _, l := range lines {
			r, err := parseRecord(l)
			if err != nil {
				t.Fatal(err)
			}
			records = append(records, r)
		}
		before := f.Image()
		frozen := formatImage(before)
		var deep bytes.Buffer
		_ = writeSnapshot(&deep, before)
		if err := f.applyRecords(uint64(i+1), records); err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
		var again bytes.Buffer
		_ = writeSnapshot(&again, before)
		if got := formatImage(before); got != frozen || !bytes.Equal(deep.Bytes(), again.Bytes()) {
			t.Fatalf("batch %d mutated the previous image:\nbefore %s\nafter %s", i, frozen, got)
		}
	}
	if got := formatMirrors(f.Image()); got != "mirror a id=#3 created=0 topics=[t:stop]\n" {
		t.Fatalf("final mirrors:\n%s", got)
	}
}

// TestFSMMirrorBatchThroughRaftEntry checks the mirror records survive the
// raft entry encoding (FSM.Apply decodes the batch).
func TestFSMMirrorBatchThroughRaftEntry(t *testing.T) {
	f := NewFSM("c", nil)
	v := "h:9092"
	batch := EncodeBatch([]Record{
		&MirrorRecord{Name: "m", MirrorID: testID(4), CreateTimeMs: 1767225600000},
		&ConfigRecord{ResourceType: ConfigResourceMirror, ResourceName: "m", Name: "bootstrap.servers", Value: &v},
	})
	if res := f.Apply(&raft.Log{Index: 1, Type: raft.LogCommand, Data: batch}); res != nil {
		t.Fatal(res)
	}
	img := f.Image()
	if m := img.Mirrors["m"]; m == nil || m.ID != testID(4) || m.CreateTimeMs != 1767225600000 || img.MirrorConfig("m")["bootstrap.servers"] != v {
		t.Fatalf("image:\n%s", formatImage(img))
	}
}
