package replication

// highWatermark is the offset every in-sync replica has reached: the
// leader's log end offset lowered to the log end offset of each other ISR
// member (Kafka's Partition.maybeIncrementLeaderHW). followerLEO reports an
// assigned follower's log end offset, -1 until it first fetches; replicas
// it does not know (not assigned) are ignored, as Kafka only looks at its
// remote replicas. ok is false when the ISR is below the effective
// min.insync.replicas, where Kafka 4 (KIP-966) holds the high watermark.
//
// In issue 3 the ISR is just the leader, so this is the leader's log end
// offset; issue 4 adds followers without changing it.
func highWatermark(leaderLEO int64, isr []int32, self int32, effectiveMinISR int, followerLEO func(id int32) (int64, bool)) (hw int64, ok bool) {
	if len(isr) < effectiveMinISR {
		return 0, false
	}
	hw = leaderLEO
	for _, id := range isr {
		if id == self {
			continue
		}
		if leo, known := followerLEO(id); known && leo < hw {
			hw = leo
		}
	}
	return hw, true
}

// effectiveMinISR is min.insync.replicas capped at the replication factor
// (Kafka's Partition.effectiveMinIsr), so a topic configured above its
// replica count can still be written.
func effectiveMinISR(minISR int32, replicas int) int {
	return min(int(max(minISR, 1)), max(replicas, 1))
}
