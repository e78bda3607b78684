package raftmeta

// A failed metadata log directory halts the node, as Kafka halts a KRaft
// broker or controller whose metadata log directory fails (the metadata
// log's IOException reaches LogDirFailureChannel, and
// BrokerServer/ControllerServer call Exit.halt). A node that stayed up
// could not follow the metadata log: a follower whose appends fail keeps
// answering the leader's heartbeats, so it would go on serving clients
// from a metadata image that never changes again.
//
// The raft library cannot carry on past a failed store either:
// hashicorp/raft panics when it cannot persist a new term
// (setCurrentTerm) or read a committed entry (processLogs), and pebble
// calls Fatalf, which must not return, when a WAL write or sync fails.
// So once the owner is listening (SetOnFailure), the first IO error of
// the store is reported to it, once, and the goroutine that met it, and
// every one that meets an error after it, never returns: as in a process
// halted at that instant, nothing after the failure acts on it. The owner
// ends the process (strait serve exits) or abandons the node (in-process
// tests), and Quorum.Close then neither waits for those goroutines nor
// closes the store under them.
//
// Before the owner listens (opening the store, bootstrapping, raft's
// own start reading it), an error is returned to the caller, which fails
// to start, and Fatalf panics.

// SetOnFailure makes fn hear the store's first IO error, from then on.
func (s *Store) SetOnFailure(fn func(error)) { s.onFailure.Store(&fn) }

// Failed reports whether the store met an IO error while its owner was
// listening: it is abandoned, with goroutines parked in it.
func (s *Store) Failed() bool { return s.failure.Load() != nil }

// fail is the path of every IO error of the store: it returns err when
// nobody listens, and otherwise reports it and parks.
func (s *Store) fail(err error) error {
	fn := s.onFailure.Load()
	if fn == nil {
		return err
	}
	s.failOnce.Do(func() {
		s.failure.Store(&err)
		(*fn)(err)
	})
	select {} // halted: see above
}
