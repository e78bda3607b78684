package coordinator

import "sort"

// pendingOffsets are the offsets open transactions committed with
// TxnOffsetCommit (KIP-98, KIP-447): in the log, in the producer's
// transactional batch, but not the group's until the transaction's COMMIT
// marker, and dropped by its ABORT (OffsetMetadataManager's
// pendingTransactionalOffsets and openTransactions). OffsetFetch does not
// return them; with RequireStable it answers UNSTABLE_OFFSET_COMMIT for
// their partitions, and they keep their partitions' committed offsets
// from expiring and their groups from being deleted as empty.
type pendingOffsets struct {
	byProducer map[int64]*openTxn
	// byGroup is the open transactions that committed offsets for each
	// group. A transaction stays here until it ends, even once tombstones
	// removed its offsets for the group, so the group is not deleted under
	// it (KAFKA-19163, KAFKA-19164).
	byGroup map[string]map[int64]*openTxn
}

// openTxn is one producer's open transaction on the shard.
type openTxn struct {
	// offsets holds, for each partition, the offsets committed since the
	// producer's last marker and, while markers are being written, those
	// committed before them, in log order: a marker ends only what was
	// decided before it (end), so each keeps its own.
	offsets map[string]map[string]map[int32][]offsetAndMetadata
	groups  map[string]bool // every group it committed for
	// markedAt is the recordOffset of the last marker decided for the
	// producer while this transaction was open, -1 if none.
	markedAt int64
}

// stagedOffset is one offset of a transaction, taken out when it ends.
type stagedOffset struct {
	group, topic string
	partition    int32
	om           offsetAndMetadata
}

func newPendingOffsets() pendingOffsets {
	return pendingOffsets{byProducer: map[int64]*openTxn{}, byGroup: map[string]map[int64]*openTxn{}}
}

// stage records an offset producer pid's transaction committed; it
// replaces one committed for the partition since the producer's last
// marker.
func (po *pendingOffsets) stage(pid int64, group, topic string, partition int32, om offsetAndMetadata) {
	txn := po.byProducer[pid]
	if txn == nil {
		txn = &openTxn{offsets: map[string]map[string]map[int32][]offsetAndMetadata{}, groups: map[string]bool{}, markedAt: -1}
		po.byProducer[pid] = txn
	}
	byTopic := txn.offsets[group]
	if byTopic == nil {
		byTopic = map[string]map[int32][]offsetAndMetadata{}
		txn.offsets[group] = byTopic
	}
	byPartition := byTopic[topic]
	if byPartition == nil {
		byPartition = map[int32][]offsetAndMetadata{}
		byTopic[topic] = byPartition
	}
	staged := byPartition[partition]
	if n := len(staged); n > 0 && staged[n-1].recordOffset > txn.markedAt {
		staged[n-1] = om
	} else {
		byPartition[partition] = append(staged, om)
	}
	txn.groups[group] = true
	byPID := po.byGroup[group]
	if byPID == nil {
		byPID = map[int64]*openTxn{}
		po.byGroup[group] = byPID
	}
	byPID[pid] = txn
}

// marking notes that a marker of producer pid was decided at recordOffset
// at: offsets the producer commits from now on are not the marker's.
func (po *pendingOffsets) marking(pid int64, at int64) {
	if txn := po.byProducer[pid]; txn != nil {
		txn.markedAt = at
	}
}

// has reports whether an open transaction committed an offset for the
// partition (OffsetMetadataManager.hasPendingTransactionalOffsets).
func (po *pendingOffsets) has(group, topic string, partition int32) bool {
	for _, txn := range po.byGroup[group] {
		if len(txn.offsets[group][topic][partition]) > 0 {
			return true
		}
	}
	return false
}

// hasGroup reports whether an open transaction committed offsets for the
// group, even if tombstones removed them since.
func (po *pendingOffsets) hasGroup(group string) bool { return len(po.byGroup[group]) > 0 }

// remove drops every open transaction's offsets for the partition: what
// an offset tombstone does to them (OffsetMetadataManager.replay).
func (po *pendingOffsets) remove(group, topic string, partition int32) {
	for _, txn := range po.byGroup[group] {
		txn.removePartition(group, topic, partition)
	}
}

func (txn *openTxn) removePartition(group, topic string, partition int32) {
	byTopic := txn.offsets[group]
	delete(byTopic[topic], partition)
	if len(byTopic[topic]) == 0 {
		delete(byTopic, topic)
	}
	if len(byTopic) == 0 {
		delete(txn.offsets, group)
	}
}

// partitions returns the topic-partitions of a group with pending offsets,
// sorted, each once.
func (po *pendingOffsets) partitions(group string) []topicPartition {
	seen := map[topicPartition]bool{}
	var out []topicPartition
	for _, txn := range po.byGroup[group] {
		for topic, byPartition := range txn.offsets[group] {
			for p := range byPartition {
				tp := topicPartition{topic, p}
				if !seen[tp] {
					seen[tp] = true
					out = append(out, tp)
				}
			}
		}
	}
	sortTopicPartitions(out)
	return out
}

// groups returns the groups with open transactions, sorted.
func (po *pendingOffsets) groups() []string {
	ids := make([]string, 0, len(po.byGroup))
	for id := range po.byGroup {
		ids = append(ids, id)
	}
	sortStrings(ids)
	return ids
}

// end ends producer pid's transaction at a marker whose recordOffset is
// before: it takes out the offsets committed before the marker (all of
// them when the marker is replayed from the log) and returns, for each
// partition, the last of them. Offsets committed after the marker was
// decided are the producer's next transaction, which stays open.
func (po *pendingOffsets) end(pid int64, before int64) []stagedOffset {
	txn := po.byProducer[pid]
	if txn == nil {
		return nil
	}
	var out []stagedOffset
	for group, byTopic := range txn.offsets {
		for topic, byPartition := range byTopic {
			for p, staged := range byPartition {
				n := 0
				for n < len(staged) && staged[n].recordOffset < before {
					n++
				}
				if n == 0 {
					continue
				}
				out = append(out, stagedOffset{group: group, topic: topic, partition: p, om: staged[n-1]})
				byPartition[p] = staged[n:]
			}
		}
	}
	for _, o := range out {
		if len(txn.offsets[o.group][o.topic][o.partition]) == 0 {
			txn.removePartition(o.group, o.topic, o.partition)
		}
	}
	for group := range txn.groups {
		if txn.offsets[group] != nil {
			continue // the next transaction committed for it too
		}
		delete(txn.groups, group)
		delete(po.byGroup[group], pid)
		if len(po.byGroup[group]) == 0 {
			delete(po.byGroup, group)
		}
	}
	if len(txn.groups) == 0 {
		delete(po.byProducer, pid)
	}
	return out
}

// topicPartition names a partition of a consumed topic.
type topicPartition struct {
	topic     string
	partition int32
}

func sortTopicPartitions(tps []topicPartition) {
	sort.Slice(tps, func(i, j int) bool {
		if tps[i].topic != tps[j].topic {
			return tps[i].topic < tps[j].topic
		}
		return tps[i].partition < tps[j].partition
	})
}
