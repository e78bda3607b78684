// Package sim is a seeded simulation of partition replication: N real
// ReplicaManagers, each over a storage.LogManager on an in-memory
// filesystem, a controller stand-in that registers and fences brokers,
// elects leaders from the ISR and takes AlterPartition, and a simulated
// network that drops, delays and reorders the Kafka requests the
// followers' fetchers send and cuts links between chosen nodes.
//
// Everything runs on the test's goroutine, driven by one random source:
// the fetchers are stepped through their Poll/Complete methods with each
// request carried as a message, the ISR changes the leaders propose wait
// in a per-node queue, and the clock is manual, so a seed replays exactly.
//
// Random acks=all appends, fetches, crashes (a process kill keeps what was
// written; a power loss keeps only what was synced, CrashClone), restarts,
// network cuts and clean leader changes run for a number of steps; then
// the network heals and every node comes back. After every step and at
// the end the checks are: no record acknowledged with acks=all is lost,
// the replicas' logs are identical up to each one's high watermark, and
// the high watermark of a running replica never decreases; at the end,
// every replica holds the same log, each record once.
//
// Power losses are limited so committed data stays recoverable, as a
// Kafka deployment without fsync assumes: a node loses unsynced data only
// while another running, intact member of the ISR has it, never while
// min.insync.replicas-1 others are still recovering from such a loss, and
// the controller fences it at once (its session would expire before it
// restarts; a restarted broker re-registers and is out of the ISR until it
// catches up).
package sim
