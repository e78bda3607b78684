package broker

import "github.com/strait-io/strait/storage"

// A node has one log directory (the first entry of log.dirs), so an IO
// error that takes one of its logs offline means its log directory has
// failed. Kafka halts a broker whose log directories have all failed
// (LogManager.handleLogDirFailure: "Shutdown broker because all log dirs
// in ... have failed", Exit.halt) and, in KRaft, one whose metadata log
// directory failed. Halting is what lets the cluster recover: the
// controller fences the silent broker after broker.session.timeout.ms and
// elects new leaders from the ISR, where a broker that stayed up would
// keep leading partitions it can no longer write, answering
// KAFKA_STORAGE_ERROR until someone restarts it. A group coordinator on a
// failed __consumer_offsets partition would rebalance its groups forever.

// logDirFailed is the log manager's OnFailure. It runs with the failed
// log's lock held, so the halt runs on its own goroutine, and it waits
// for Start to return: abandoning a node that is still starting would
// leave what Start opens after it running.
func (n *Node) logDirFailed(se *storage.StorageError) {
	n.haltOnce.Do(func() {
		n.haltErr = se
		n.logger.Error("halting: the log directory failed, so this broker stops at once, as Kafka halts a broker whose log directories have all failed",
			"dir", se.Dir, "op", se.Op, "err", se.Err)
		go func() {
			<-n.startDone
			// As a killed process: nothing more reaches the log
			// directory, and no controlled shutdown (it would try to
			// write).
			n.Abandon()
			close(n.halted)
		}()
	})
}

// Halted is closed once the node has halted because its log directory
// failed; HaltErr then says why. `strait serve` exits with status 1.
func (n *Node) Halted() <-chan struct{} { return n.halted }

// HaltErr is the storage error that halted the node, valid once Halted
// is closed.
func (n *Node) HaltErr() error {
	<-n.halted
	return n.haltErr
}
