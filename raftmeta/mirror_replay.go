package raftmeta

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
)

// Replay of the mirror records, copy-on-write like the rest of the builder
// (replay.go). The FSM checks what keeps the image consistent whoever wrote
// the batch: a valid and unused name, a unique non-zero id, and MIRROR
// configs only for a mirror that exists. What a mirror's configs must hold
// is the controller's to check (ValidateMirrorConfigs).

func (b *builder) mirrors() map[string]*Mirror {
	if !b.mirrorsCopied {
		b.next.Mirrors = maps.Clone(b.next.Mirrors)
		if b.next.Mirrors == nil {
			b.next.Mirrors = map[string]*Mirror{}
		}
		b.mirrorsCopied = true
	}
	return b.next.Mirrors
}

func (b *builder) createMirror(r *MirrorRecord) error {
	if err := ValidateMirrorName(r.Name); err != nil {
		return err
	}
	if r.MirrorID.IsZero() {
		return fmt.Errorf("mirror %q has the zero mirror id", r.Name)
	}
	if _, ok := b.next.Mirrors[r.Name]; ok {
		return fmt.Errorf("mirror %q already exists", r.Name)
	}
	for _, m := range b.next.Mirrors {
		if m.ID == r.MirrorID {
			return fmt.Errorf("mirror id %s already belongs to %q", r.MirrorID, m.Name)
		}
	}
	b.mirrors()[r.Name] = &Mirror{Name: r.Name, ID: r.MirrorID, CreateTimeMs: r.CreateTimeMs}
	if b.createdMirrors == nil {
		b.createdMirrors = map[Uuid]bool{}
	}
	b.createdMirrors[r.MirrorID] = true
	return nil
}

func (b *builder) removeMirror(r *RemoveMirrorRecord) error {
	var name string
	for n, m := range b.next.Mirrors {
		if m.ID == r.MirrorID {
			name = n
			break
		}
	}
	if name == "" {
		return fmt.Errorf("unknown mirror id %s", r.MirrorID)
	}
	delete(b.mirrors(), name)
	// The mirror's configs go with it, as a topic's do with the topic: a
	// mirror created again under the name starts from what its
	// CreateMirror gives.
	res := ConfigResource{Type: ConfigResourceMirror, Name: name}
	if _, ok := b.next.Configs[res]; ok {
		b.configs()
		delete(b.next.Configs, res)
		b.changedConfigs[res] = true
	}
	return nil
}

// checkMirrorConfig refuses a MIRROR config record for a mirror that does
// not exist (at this point of the batch).
func (b *builder) checkMirrorConfig(r *ConfigRecord) error {
	if r.ResourceType != ConfigResourceMirror {
		return nil
	}
	if _, ok := b.next.Mirrors[r.ResourceName]; !ok {
		return fmt.Errorf("config %s of unknown mirror %q", r.Name, r.ResourceName)
	}
	return nil
}

// mirrorDelta adds the mirrors the batch created and deleted, resolved
// against the final image like topics: a mirror created and deleted within
// the batch is in neither list; one deleted and created again under its
// name (a new id) is in both.
func (b *builder) mirrorDelta(d *Delta) {
	for _, m := range b.next.Mirrors {
		if b.createdMirrors[m.ID] {
			d.CreatedMirrors = append(d.CreatedMirrors, m)
		}
	}
	if b.mirrorsCopied {
		for name, m := range b.prev.Mirrors {
			if cur, ok := b.next.Mirrors[name]; !ok || cur.ID != m.ID {
				d.DeletedMirrors = append(d.DeletedMirrors, m)
			}
		}
	}
	sortMirrors(d.CreatedMirrors)
	sortMirrors(d.DeletedMirrors)
}

func sortMirrors(ms []*Mirror) {
	slices.SortFunc(ms, func(a, b *Mirror) int { return cmp.Compare(a.Name, b.Name) })
}

// appendMirrorRecords appends a MirrorRecord per mirror, by name (the
// snapshot's part; the configs follow with the others).
func appendMirrorRecords(out []Record, img *Image) []Record {
	for _, name := range img.MirrorNames() {
		m := img.Mirrors[name]
		out = append(out, &MirrorRecord{Name: m.Name, MirrorID: m.ID, CreateTimeMs: m.CreateTimeMs})
	}
	return out
}

// diffMirrors adds to d the mirrors created and deleted between two images
// that are not related by replay (a restored snapshot); unsorted.
func diffMirrors(d *Delta, prev, next *Image) {
	for name, m := range next.Mirrors {
		if old, ok := prev.Mirrors[name]; !ok || *old != *m {
			d.CreatedMirrors = append(d.CreatedMirrors, m)
		}
	}
	for name, m := range prev.Mirrors {
		if cur, ok := next.Mirrors[name]; !ok || *cur != *m {
			d.DeletedMirrors = append(d.DeletedMirrors, m)
		}
	}
	sortMirrors(d.CreatedMirrors)
	sortMirrors(d.DeletedMirrors)
}
