package coordinator

// timerKind names what a timer is for; with the group and member ids it
// keys the shard's timers (a runtime.Timer[timerKey], Kafka's
// CoordinatorTimer), so scheduling the same key again replaces the
// deadline.
type timerKind int8

const (
	timerHeartbeat         timerKind = iota // a member's session timeout
	timerJoin                               // the join phase: rebalance timeout or initial delay
	timerSync                               // the sync phase: members that never sent SyncGroup
	timerExpiration                         // offsets.retention.check.interval.ms
	timerConsumerSession                    // a consumer group member's session timeout
	timerConsumerRebalance                  // a consumer group member's time to revoke partitions
	timerShareSession                       // a share group member's session timeout
)

type timerKey struct {
	kind   timerKind
	group  string
	member string
}
