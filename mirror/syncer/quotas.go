package syncer

import (
	"context"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/strait-io/strait/raftmeta"
)

// The client quota step (issue 32, opt-in with
// mirror.client.quotas.sync.enable): the source's client quotas
// (DescribeClientQuotas, which any Kafka cluster serves) are made the
// destination's (AlterClientQuotas), so that after a failover the clients
// keep the quotas they had. The destination is made to hold exactly the
// source's: a key the source does not set is removed there, of an entity
// the source has or not. The step is off by default because a
// destination's own quotas are then not kept.

// planQuotas is the AlterClientQuotas entries that make dst, the
// destination image's quotas, equal to the source's: per entity, the keys
// whose value differs set and the keys the source lacks removed, in the
// order of the entities.
func planQuotas(src kadm.DescribedClientQuotas, dst map[raftmeta.QuotaEntity]map[string]float64) []kadm.AlterClientQuotaEntry {
	want := map[raftmeta.QuotaEntity]map[string]float64{}
	for _, q := range src {
		comps := make([]raftmeta.QuotaEntityComponent, 0, len(q.Entity))
		for _, c := range q.Entity {
			comps = append(comps, raftmeta.QuotaEntityComponent{Type: c.Type, Name: c.Name})
		}
		e, err := raftmeta.ParseQuotaEntity(comps)
		if err != nil {
			continue // not an entity this cluster can hold
		}
		values := map[string]float64{}
		for _, v := range q.Values {
			values[v.Key] = v.Value
		}
		want[e] = values
	}
	entities := slices.Collect(maps.Keys(want))
	for e := range dst {
		if _, ok := want[e]; !ok {
			entities = append(entities, e)
		}
	}
	slices.SortFunc(entities, raftmeta.CompareQuotaEntities)
	var out []kadm.AlterClientQuotaEntry
	for _, e := range entities {
		var ops []kadm.AlterClientQuotaOp
		for _, k := range slices.Sorted(maps.Keys(want[e])) {
			if have, ok := dst[e][k]; !ok || have != want[e][k] {
				ops = append(ops, kadm.AlterClientQuotaOp{Key: k, Value: want[e][k]})
			}
		}
		for _, k := range slices.Sorted(maps.Keys(dst[e])) {
			if _, ok := want[e][k]; !ok {
				ops = append(ops, kadm.AlterClientQuotaOp{Key: k, Remove: true})
			}
		}
		if len(ops) == 0 {
			continue
		}
		entry := kadm.AlterClientQuotaEntry{Ops: ops}
		for _, c := range e.Components() {
			entry.Entity = append(entry.Entity, kadm.ClientQuotaEntityComponent{Type: c.Type, Name: c.Name})
		}
		out = append(out, entry)
	}
	return out
}

// syncQuotas is the client quota step; it returns the number of failed
// operations (a failed describe or alter request, an entity refused).
func (s *Syncer) syncQuotas(ctx context.Context, v *mirrorView) int {
	if !v.set.quotas {
		return 0
	}
	src, err := s.src.DescribeClientQuotas(ctx, false, nil)
	if err != nil {
		s.logger.Warn("could not describe the source's client quotas", "err", err)
		return 1
	}
	plan := planQuotas(src, v.img.ClientQuotas)
	if len(plan) == 0 {
		return 0
	}
	res, err := s.dst.AlterClientQuotas(ctx, plan)
	if err != nil {
		s.logger.Warn("could not alter the destination's client quotas", "entities", len(plan), "err", err)
		return 1
	}
	failed := 0
	for _, r := range res {
		if r.Err != nil {
			failed++
			s.logger.Warn("could not copy a client quota of the source", "entity", r.Entity.String(), "err", r.Err, "message", r.ErrMessage)
		}
	}
	s.c.quotasAltered.Add(int64(len(res) - failed))
	s.logger.Info("synced the source's client quotas", "entities", len(res)-failed, "failed", failed)
	return failed
}
