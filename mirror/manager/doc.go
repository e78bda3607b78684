// Package manager is the broker's MirrorMetadataManager (KIP-1279): it
// drives one mirror/partition state machine per local replica of a mirror
// topic, performs the effects the machines ask for against the destination
// (replication), the __mirror_state coordinator, the controller and the
// source cluster, and runs, per mirror, one source connection
// (mirror/source.Cluster) and one fetcher manager (replication/fetcher)
// that copy the source partitions into the local leaders' logs.
//
// # Threads
//
// One goroutine per Manager (the loop) owns every machine: it takes
// metadata images (OnMetadata), effect results, fetcher reports and
// timers from one unbounded queue, so no caller ever blocks on it (the
// metadata publisher calls OnMetadata). Reconcile is level-triggered (the
// seed's MirrorMetadataManager.onMetadataUpdate): every image is compared
// with every machine, whatever changed.
//
// Effects run on a per-partition executor goroutine, in emission order,
// each with its own context: those that do IO (state reads and writes,
// the LME query, truncations, epoch bumps, MIRROR_PID_RESET, ISR waits,
// retry timers) never hold the loop. An effect whose Ref.LeaderEpoch is
// not the machine's current leader epoch is dropped before it starts
// (RemoveFetcher excepted: removing is always safe), and a running wait
// the machine abandoned (a new leader epoch, a new desired state) is
// cancelled. Results are stepped back with the effect's Ref; the machine
// ignores stale ones.
//
// # Fetching
//
// The fetcher core writes a mirror partition through a Replica wrapper of
// the LeaderPartition bound to the AddFetcher's leader epoch: every batch
// is checked (CRC-32C and structure) before anything is appended, batch
// epochs may not go below the log's last batch epoch (FetchEpochRegressed)
// and a batch above the handle's leader epoch is held back
// (fetcher.ErrRetryAppend) while the machine bumps the destination leader
// epoch (SourceEpochAhead; KIP-1279's DLE >= SLE).
package manager
