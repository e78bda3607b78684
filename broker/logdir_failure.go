package broker

import (
	"context"
	"fmt"
	"time"

	"github.com/strait-io/strait/storage"
)

// An IO error that takes one of a node's logs offline means its log
// directory has failed, and the node halts, whichever entry of log.dirs it
// was. Kafka in KRaft marks only that directory offline when there are
// several (JBOD, KIP-858: the controller moves leadership off the
// replicas in it) and halts once all have failed; Strait does not yet
// serve with a directory offline. Kafka halts a broker whose log directories have all failed
// (LogManager.handleLogDirFailure: "Shutdown broker because all log dirs
// in ... have failed", Exit.halt) and, in KRaft, one whose metadata log
// directory failed. Halting is what lets the cluster recover: the
// controller fences the silent broker after broker.session.timeout.ms and
// elects new leaders from the ISR, where a broker that stayed up would
// keep leading partitions it can no longer write, answering
// KAFKA_STORAGE_ERROR until someone restarts it. A group coordinator on a
// failed __consumer_offsets partition would rebalance its groups forever.

// logDirFailed is the log manager's OnFailure. It runs with the failed
// log's lock held, so the halt runs on its own goroutine (halt).
func (n *Node) logDirFailed(se *storage.StorageError) {
	n.halt(se, "halting: the log directory failed, so this broker stops at once, as Kafka halts a broker whose log directories have all failed",
		"dir", se.Dir, "op", se.Op, "err", se.Err)
}

// metadataDirFailed is the metadata store's OnStoreFailure: the raft log
// or stable store met an IO error (raftmeta/store_failure.go). The raft
// goroutine that met it never returns; the halt runs on its own.
func (n *Node) metadataDirFailed(err error) {
	n.halt(fmt.Errorf("metadata log directory failed: %w", err),
		"halting: the metadata log directory failed, so this node stops at once, as Kafka halts a node whose metadata log directory failed",
		"err", err)
}

// haltAnswerWithin bounds how long a halting node goes on writing the
// answers of the requests it had read.
const haltAnswerWithin = time.Second

// halt abandons the node once, on its own goroutine, after Start has
// returned: abandoning a node that is still starting would leave what
// Start opens after it running.
func (n *Node) halt(err error, msg string, attrs ...any) {
	n.haltBy(n.abandonAnswering, err, msg, attrs...)
}

// abandonAnswering stops the node as a killed process stops (nothing more
// reaches the log directory, no controlled shutdown: it would try to
// write), except that the requests it had read are answered first, for
// up to haltAnswerWithin, while new connections are refused. The logs are
// abandoned before that, so what those requests would still write fails.
// The append that met the failed disk is thus answered
// KAFKA_STORAGE_ERROR, as Kafka answers it from its request handler while
// its LogDirFailureHandler thread goes on to halt the process
// (ReplicaManager.appendToLocalLog, handleLogDirFailure); before, every
// connection was closed at once and the answer was lost whenever the
// close came first.
func (n *Node) abandonAnswering() {
	if n.logs != nil {
		n.logs.Abandon()
	}
	if n.server != nil {
		ctx, cancel := context.WithTimeout(context.Background(), haltAnswerWithin)
		_ = n.server.ShutdownRefusing(ctx) // a timeout here closes what is left, as Abandon would
		cancel()
	}
	n.Abandon()
}

// haltBy stops the node with stop, once, on its own goroutine, after
// Start has returned, then closes halted.
func (n *Node) haltBy(stop func(), err error, msg string, attrs ...any) {
	n.haltOnce.Do(func() {
		n.haltErr = err
		n.logger.Error(msg, attrs...)
		go func() {
			<-n.startDone
			stop()
			close(n.halted)
		}()
	})
}

// Halted is closed once the node has halted because its log directory,
// its metadata log directory or a listener failed; HaltErr then says
// why. `strait serve` exits with status 1.
func (n *Node) Halted() <-chan struct{} { return n.halted }

// HaltErr is the error that halted the node (a *storage.StorageError for
// the log directory), valid once Halted is closed.
func (n *Node) HaltErr() error {
	<-n.halted
	return n.haltErr
}
