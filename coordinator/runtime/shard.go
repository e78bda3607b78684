package runtime

// Shard is what a Registry needs of the state of one partition of an
// internal topic (Kafka's CoordinatorShard, with the CoordinatorContext's
// epoch and state): a pointer to a coordinator's shard type, in practice.
// Shards are compared with ==, to tell whether the shard a caller holds is
// still the one the registry serves (Registry.Reload).
type Shard interface {
	comparable

	// Epoch is the leader epoch of the partition the shard was created at.
	// It never changes.
	Epoch() int32
	// Closed reports whether the shard stopped serving for good: it was
	// unloaded, or its load failed. The registry calls it with its lock
	// held, so it must not call the registry.
	Closed() bool
	// Run loads the partition and then serves it. The registry calls it
	// on a goroutine of its own; it must return once Unload was called
	// (Registry.Close waits for it).
	Run()
	// Unload stops serving: the shard is closed from then on, and work in
	// flight is cancelled or failed. The registry may call it more than
	// once on a shard (a resigned shard kept in place is unloaded again
	// when it is replaced or the registry closes), so it must be
	// idempotent.
	Unload()
}
