package replication

import (
	"slices"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage"
)

// replicaToCreate is a partition of a metadata delta this broker hosts and has
// no log for yet; at is its index in the delta's changes.
type replicaToCreate struct {
	tp storage.TopicPartition
	pp *raftmeta.Partition
	at int
}

// placeNewReplicas creates the partitions of creates, their logs together
// (storage.GetOrCreateLogs opens several at once: a delta that created a
// thousand topics made ten thousand logs one after another before), and
// puts each in next and in its place of touched and changes, which hold a
// nil partition there; a replica whose log cannot be made is offline and
// leaves both lists.
func (r *ReplicaManager) placeNewReplicas(creates []replicaToCreate, img *raftmeta.Image, next *partitionTable,
	touched []*Partition, changes []partitionChange) ([]*Partition, []partitionChange) {
	ps, errs := r.createPartitions(creates, img)
	for i, c := range creates {
		if errs[i] != nil {
			r.logger.Error("cannot create the partition log; the replica is offline", "partition", c.tp.String(), "err", errs[i])
			next.offline[c.tp] = errs[i]
			continue
		}
		delete(next.offline, c.tp)
		next.byTP[c.tp] = ps[i]
		touched[c.at], changes[c.at].p = ps[i], ps[i]
	}
	touched = slices.DeleteFunc(touched, func(p *Partition) bool { return p == nil })
	changes = slices.DeleteFunc(changes, func(c partitionChange) bool { return c.p == nil })
	return touched, changes
}

// createPartitions opens or creates the logs of new local replicas. A log
// left on disk by an older topic of the same name (deleted while this
// broker was down) is deleted first, as Kafka does with stray logs whose
// topic id no longer matches. A drill clone's partition is built on its
// own (openLog); the others are created together.
func (r *ReplicaManager) createPartitions(creates []replicaToCreate, img *raftmeta.Image) ([]*Partition, []error) {
	ps, errs := make([]*Partition, len(creates)), make([]error, len(creates))
	cfgs := make([]storage.LogConfig, len(creates))
	var (
		batch   []storage.NewLog
		batchOf []int // creates index of each batch entry
	)
	for i, c := range creates {
		cfg, err := r.cfg.LogConfigFor(c.tp.Topic, img)
		if err != nil {
			errs[i] = err
			continue
		}
		cfgs[i] = cfg
		id := storage.TopicID(c.pp.TopicID)
		if l, ok := r.logs.Log(c.tp); ok && !l.TopicID().IsZero() && l.TopicID() != id {
			r.logger.Warn("deleting a log left by an older topic of the same name", "partition", c.tp.String(),
				"logTopicId", l.TopicID().String(), "topicId", id.String())
			if err := r.logs.DeleteLog(c.tp); err != nil {
				errs[i] = err
				continue
			}
		}
		if _, clone := img.TopicConfig(c.tp.Topic)[raftmeta.MirrorCloneConfig]; clone {
			l, err := r.openLog(c.tp, id, cfg, img)
			if err != nil {
				errs[i] = err
				continue
			}
			ps[i] = r.newLocalPartition(c.tp, id, cfg, l)
			continue
		}
		batch = append(batch, storage.NewLog{TP: c.tp, ID: id, Config: cfg})
		batchOf = append(batchOf, i)
	}
	logs, logErrs := r.logs.GetOrCreateLogs(batch)
	for j, i := range batchOf {
		if errs[i] = logErrs[j]; errs[i] == nil {
			ps[i] = r.newLocalPartition(creates[i].tp, batch[j].ID, cfgs[i], logs[j])
		}
	}
	return ps, errs
}

// newLocalPartition is the partition of a log just opened or created. A
// log found on disk was opened with the config its LogManager knew; the
// image's is authoritative.
func (r *ReplicaManager) newLocalPartition(tp storage.TopicPartition, id storage.TopicID, cfg storage.LogConfig, l *storage.Log) *Partition {
	l.SetConfig(cfg)
	return newPartition(tp, id, r, l)
}
