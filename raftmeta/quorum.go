package raftmeta

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/raftmeta/ctrlrpc"
)

// ErrNotController is returned when a write reaches a node that is not the
// raft leader; it wraps kerr.NotController.
var ErrNotController = fmt.Errorf("raftmeta: not the active controller: %w", kerr.NotController)

// clusterIDKey holds the cluster id in the stable store.
var clusterIDKey = []byte("strait.cluster.id")

// closeTimeout bounds how long Close waits for raft to stop.
const closeTimeout = 10 * time.Second

// Quorum is this node's member of the metadata quorum: the raft node, its
// stores and transport, the FSM and the controller (KRaft's
// QuorumController and RaftManager roles in one). A voter (one of
// Config.Voters, or the only node) may become the active controller; any
// other node is a raft non-voter that follows the log. Raft and the
// controller RPC share the CONTROLLER listener (ctrlrpc.StreamLayer).
type Quorum struct {
	cfg    Config
	store  *Store
	snaps  *raft.FileSnapshotStore
	stream *ctrlrpc.StreamLayer
	trans  *raft.NetworkTransport
	fsm    *FSM
	ctrl   *Controller
	hlog   hclog.Logger
	raft   atomic.Pointer[raft.Raft]
	synced atomic.Uint64 // the term whose entries the FSM is known to have applied

	// progress notes what the followers answer the leader
	// (replica_progress.go); tracked is the transport raft uses, which
	// feeds it. voterChanges holds the one voter change under way
	// (quorum_membership.go).
	progress     *progressTracker
	tracked      raft.Transport
	voterChanges chan struct{}

	// commitNotices asks for a barrier after a committed write
	// (commit_notice.go).
	commitNotices chan struct{}

	// stop ends the periodic controller work started by Start; ticks is
	// done when it has.
	stop  context.CancelFunc
	ticks sync.WaitGroup

	closeOnce sync.Once
	closeErr  error
}

// Open opens the metadata directory and binds the CONTROLLER listener;
// Start starts raft.
func Open(cfg Config) (*Quorum, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	logger := cfg.Logger.With("component", "raftmeta", "node", cfg.NodeID)
	cfg.Logger = logger
	q := &Quorum{cfg: cfg, hlog: newHclog(logger, hclogLevel(cfg.RaftLogLevel.Level())), commitNotices: make(chan struct{}, 1),
		voterChanges: make(chan struct{}, 1)}
	ok := false
	defer func() {
		if !ok {
			q.closeResources()
		}
	}()

	if err := os.MkdirAll(filepath.Join(cfg.Dir, "raft"), 0o755); err != nil {
		return nil, fmt.Errorf("raftmeta: %w", err)
	}
	store, err := OpenStore(filepath.Join(cfg.Dir, "raft"), cfg.FS, logger)
	if err != nil {
		return nil, err
	}
	q.store = store
	if err := q.checkClusterID(); err != nil {
		return nil, err
	}
	// FileSnapshotStore keeps its files in <base>/snapshots.
	q.snaps, err = raft.NewFileSnapshotStoreWithLogger(cfg.Dir, 2, q.hlog.Named("snapshots"))
	if err != nil {
		return nil, fmt.Errorf("raftmeta: snapshot store: %w", err)
	}
	var advertise net.Addr
	if a := q.advertiseAddr(); a != "" {
		if advertise, err = net.ResolveTCPAddr("tcp", a); err != nil {
			return nil, fmt.Errorf("raftmeta: advertised address %q: %w", a, err)
		}
	}
	if err := q.loadBootstrap(); err != nil {
		return nil, err
	}
	q.fsm = NewFSM(q.cfg.ClusterID, logger)
	q.ctrl = newController(&q.cfg, quorumLog{q}, logger)
	ln, err := q.listen(cfg.BindAddr)
	if err != nil {
		return nil, fmt.Errorf("raftmeta: controller listener %s: %w", cfg.BindAddr, err)
	}
	if cfg.WrapListener != nil {
		ln = cfg.WrapListener(ln)
	}
	if advertise == nil {
		// Other nodes dial the address raft gives them (as
		// raft.NewTCPTransport refuses an unadvertisable one).
		if ta, ok := ln.Addr().(*net.TCPAddr); ok && ta.IP.IsUnspecified() {
			ln.Close()
			return nil, fmt.Errorf("raftmeta: controller listener %s binds every interface: set an advertised address", ln.Addr())
		}
	}
	server := ctrlrpc.NewServer(q.ctrl, logger.With("component", "ctrlrpc"))
	q.stream = ctrlrpc.NewStreamLayer(ln, advertise, cfg.Dialer, server, logger)
	q.trans = raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream:  q.stream,
		MaxPool: 3,
		Timeout: 10 * time.Second,
		Logger:  q.hlog.Named("transport"),
	})
	q.progress = newProgressTracker(cfg.Clock.Now, func() uint64 {
		if r := q.raft.Load(); r != nil {
			return r.LastIndex()
		}
		return 0
	})
	q.tracked = &progressTransport{NetworkTransport: q.trans, tracker: q.progress}
	ok = true
	return q, nil
}

// checkClusterID compares the configured cluster id with the stored one
// (Kafka refuses to join a quorum of another cluster:
// InconsistentClusterIdException) and stores it in a new directory.
func (q *Quorum) checkClusterID() error {
	stored, err := q.store.Get(clusterIDKey)
	switch {
	case errors.Is(err, ErrKeyNotFound):
		if q.cfg.ClusterID == "" {
			return nil
		}
		return q.store.Set(clusterIDKey, []byte(q.cfg.ClusterID))
	case err != nil:
		return err
	case q.cfg.ClusterID == "":
		q.cfg.ClusterID = string(stored)
	case q.cfg.ClusterID != string(stored):
		return fmt.Errorf("raftmeta: the metadata log in %s belongs to cluster %q, not %q", q.cfg.Dir, stored, q.cfg.ClusterID)
	}
	return nil
}

// advertiseAddr is the address this node tells the others, or "" to use
// the bound one.
func (q *Quorum) advertiseAddr() string {
	if q.cfg.AdvertiseAddr != "" {
		return q.cfg.AdvertiseAddr
	}
	if a, ok := q.cfg.Voters[q.cfg.NodeID]; ok && !strings.HasSuffix(a, ":0") {
		return a
	}
	return ""
}

// Addr is the CONTROLLER listener's address.
func (q *Quorum) Addr() string { return string(q.trans.LocalAddr()) }

// ControllerAddr is the active controller's CONTROLLER address as this
// node knows it ("" when no leader is known): raft's leader id mapped to
// its voter address, else the address raft has for it.
func (q *Quorum) ControllerAddr() string {
	r := q.raft.Load()
	if r == nil {
		return ""
	}
	addr, id := r.LeaderWithID()
	if n, err := strconv.ParseInt(string(id), 10, 32); err == nil {
		if a, ok := q.cfg.Voters[int32(n)]; ok && !strings.HasSuffix(a, ":0") {
			return a
		}
	}
	return string(addr)
}

// NewClient returns a client of the controller channel for this node: it
// follows raft's leader, falls back on the voters' addresses, and dials
// with Config.Dialer. Close it when done.
func (q *Quorum) NewClient() *ctrlrpc.Client {
	var bootstrap []string
	for _, id := range slices.Sorted(maps.Keys(q.cfg.Voters)) {
		if a := q.cfg.Voters[id]; !strings.HasSuffix(a, ":0") {
			bootstrap = append(bootstrap, a)
		}
	}
	if len(bootstrap) == 0 {
		bootstrap = []string{q.Addr()}
	}
	return ctrlrpc.NewClient(ctrlrpc.ClientConfig{
		ClientID:  ctrlrpc.NodeClientID(q.cfg.NodeID),
		Resolve:   q.ControllerAddr,
		Bootstrap: bootstrap,
		Dialer:    q.cfg.Dialer,
		Logger:    q.cfg.Logger.With("component", "ctrlrpc"),
	})
}

// IsVoter reports whether this node is a voter of the quorum.
func (q *Quorum) IsVoter() bool { return q.cfg.IsVoter() }

// Start starts raft: it restores the newest snapshot and, on an empty
// directory of a voter, bootstraps the voter set from Voters (a non-voter
// waits for the active controller to add it when its broker registers).
// It does not wait for a leader (WaitReady does). The active controller's
// periodic work (session expiry, unclean elections, rebalance) runs from
// here until Close.
func (q *Quorum) Start(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if q.raft.Load() != nil {
		return errors.New("raftmeta: quorum already started")
	}
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(strconv.Itoa(int(q.cfg.NodeID)))
	rc.HeartbeatTimeout = q.cfg.HeartbeatTimeout
	rc.ElectionTimeout = q.cfg.ElectionTimeout
	rc.LeaderLeaseTimeout = q.cfg.HeartbeatTimeout
	rc.CommitTimeout = q.cfg.CommitTimeout
	rc.SnapshotThreshold = q.cfg.SnapshotThreshold
	rc.SnapshotInterval = q.cfg.SnapshotInterval
	rc.TrailingLogs = q.cfg.TrailingLogs
	rc.Logger = q.hlog.Named("raft")
	// A voter taken out by RemoveRaftVoter stays a non-voter and follows
	// the log (KRaft's removed voter goes on as an observer); raft would
	// otherwise shut down a leader that removed itself, and its broker
	// would lose the metadata.
	rc.ShutdownOnRemove = false

	has, err := raft.HasExistingState(q.store, q.store, q.snaps)
	if err != nil {
		return fmt.Errorf("raftmeta: %w", err)
	}
	// Every voter bootstraps the same configuration; raft then elects. A
	// non-voter starts empty and waits to be added.
	if !has && q.cfg.IsVoter() {
		if err := raft.BootstrapCluster(rc, q.store, q.store, q.snaps, q.tracked, q.voterConfiguration()); err != nil {
			return fmt.Errorf("raftmeta: bootstrap: %w", err)
		}
	}
	r, err := raft.NewRaft(rc, q.fsm, q.store, q.store, snapshotsOf(q.snaps, q.store), q.tracked)
	if err != nil {
		return fmt.Errorf("raftmeta: start raft: %w", err)
	}
	if q.cfg.OnStoreFailure != nil {
		// From here on the store is raft's goroutines', which cannot
		// survive its failure (store_failure.go). Not before NewRaft
		// returns: it reads the store on this goroutine, which must
		// return an error rather than park (the node would wait for
		// Start to return before it halts).
		q.store.SetOnFailure(q.cfg.OnStoreFailure)
	}
	q.raft.Store(r)
	tctx, stop := context.WithCancel(context.Background())
	q.stop = stop
	q.ticks.Add(2)
	go q.runTicks(tctx)
	go q.runCommitNotices(tctx)
	return nil
}

// runTicks runs the active controller's periodic work (Controller.tick)
// every SessionCheckInterval while this node leads.
func (q *Quorum) runTicks(ctx context.Context) {
	defer q.ticks.Done()
	t := time.NewTicker(q.cfg.SessionCheckInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !q.IsLeader() {
			continue
		}
		tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		if err := q.ctrl.tick(tctx); err != nil && !errors.Is(err, ErrNotController) && ctx.Err() == nil {
			q.cfg.Logger.Warn("controller periodic work failed", "err", err)
		}
		cancel()
	}
}

func (q *Quorum) voterConfiguration() raft.Configuration {
	voters := maps.Clone(q.cfg.Voters)
	if voters == nil {
		voters = map[int32]string{}
	}
	if a, ok := voters[q.cfg.NodeID]; !ok || strings.HasSuffix(a, ":0") {
		voters[q.cfg.NodeID] = string(q.trans.LocalAddr())
	}
	var c raft.Configuration
	for _, id := range slices.SortedFunc(maps.Keys(voters), cmp.Compare[int32]) {
		c.Servers = append(c.Servers, raft.Server{
			Suffrage: raft.Voter,
			ID:       raft.ServerID(strconv.Itoa(int(id))),
			Address:  raft.ServerAddress(voters[id]),
		})
	}
	return c
}

// WaitReady waits until a leader is known and this node's FSM has applied
// everything the leader had committed: the image is then current.
func (q *Quorum) WaitReady(ctx context.Context) error {
	r := q.raft.Load()
	if r == nil {
		return errors.New("raftmeta: quorum not started")
	}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if r.State() == raft.Leader {
			if err := q.sync(ctx); err == nil {
				return nil
			} else if ctx.Err() != nil {
				return fmt.Errorf("raftmeta: wait for the metadata quorum: %w", err)
			}
		} else if _, id := r.LeaderWithID(); id != "" && r.CommitIndex() > 0 && r.AppliedIndex() >= r.CommitIndex() {
			// A follower's commit index is what the leader told it.
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("raftmeta: wait for the metadata quorum: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

// sync makes sure the FSM applied every entry of earlier terms before the
// controller reads the image: a new leader may still be applying the
// entries it inherited. A barrier per term is enough, since afterwards the
// leader's own writes wait to be applied.
func (q *Quorum) sync(ctx context.Context) error {
	r := q.raft.Load()
	if r == nil {
		return ErrNotController
	}
	term := r.CurrentTerm()
	if q.synced.Load() == term {
		return nil
	}
	f := r.Barrier(timeoutOf(ctx))
	if err := waitFuture(ctx, f); err != nil {
		return err
	}
	q.synced.Store(term)
	return nil
}

// timeoutOf turns a context's deadline into raft's enqueue timeout (0 is
// none).
func timeoutOf(ctx context.Context) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		return max(time.Until(dl), time.Millisecond)
	}
	return 0
}

// waitFuture waits for a raft future or the context, mapping raft's
// leadership errors to ErrNotController.
func waitFuture(ctx context.Context, f raft.Future) error {
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	select {
	case err := <-done:
		return raftError(err)
	case <-ctx.Done():
		return ctx.Err()
	}
}

func raftError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrLeadershipLost),
		errors.Is(err, raft.ErrRaftShutdown), errors.Is(err, raft.ErrLeadershipTransferInProgress):
		return fmt.Errorf("%w: %w", ErrNotController, err)
	case errors.Is(err, raft.ErrEnqueueTimeout):
		return fmt.Errorf("%w: %w", context.DeadlineExceeded, err)
	}
	return err
}

// Image returns the newest applied metadata image.
func (q *Quorum) Image() *Image { return q.fsm.Image() }

// Subscribe registers fn for every delta applied from now on (see
// FSM.Subscribe: fn runs on the FSM goroutine and must not block for long).
func (q *Quorum) Subscribe(fn func(d *Delta, img *Image)) (cancel func()) {
	return q.fsm.Subscribe(fn)
}

// IsLeader reports whether this node is the raft leader, the active
// controller.
func (q *Quorum) IsLeader() bool {
	r := q.raft.Load()
	return r != nil && r.State() == raft.Leader
}

// LeaderID is the active controller's node id, -1 when unknown.
func (q *Quorum) LeaderID() int32 {
	r := q.raft.Load()
	if r == nil {
		return -1
	}
	_, id := r.LeaderWithID()
	n, err := strconv.ParseInt(string(id), 10, 32)
	if id == "" || err != nil {
		return -1
	}
	return int32(n)
}

// TransferLeadership hands the active controller role to another voter,
// for a node about to stop gracefully (Kafka's controller resigns on
// shutdown): the others then need not wait for an election timeout. It
// does nothing on a node that does not lead or has no other voter.
func (q *Quorum) TransferLeadership(ctx context.Context) error {
	r := q.raft.Load()
	if r == nil || r.State() != raft.Leader {
		return nil
	}
	// The voters are raft's, which AddRaftVoter and RemoveRaftVoter may
	// have changed since controller.quorum.voters bootstrapped them.
	cf := r.GetConfiguration()
	if err := waitFuture(ctx, cf); err != nil || len(voterIDs(cf.Configuration())) < 2 {
		return nil
	}
	if err := waitFuture(ctx, r.LeadershipTransfer()); err != nil {
		return fmt.Errorf("raftmeta: leadership transfer: %w", err)
	}
	return nil
}

// Controller is the controller that validates admin requests and appends
// their records; its writes answer NOT_CONTROLLER on a follower.
func (q *Quorum) Controller() *Controller { return q.ctrl }

// Close shuts raft down gracefully (pending writes fail with
// NOT_CONTROLLER), then closes the transport and the stores. It waits at
// most 10s for raft; if raft does not stop by then, the stores stay open
// (closing them under raft would corrupt nothing but could crash it) and
// Close returns an error.
func (q *Quorum) Close() error {
	q.closeOnce.Do(func() {
		if q.store != nil && q.store.Failed() {
			q.closeErr = q.closeFailed()
			return
		}
		if q.stop != nil {
			q.stop()
			q.ticks.Wait()
		}
		if r := q.raft.Load(); r != nil {
			f := r.Shutdown()
			// The shutdown future joins every raft goroutine before it
			// closes the transport. A shut-down raft leaves the RPCs it
			// receives unanswered until its transport closes, so a
			// replication or heartbeat goroutine waiting on a voter that
			// stops at the same time waits out the transport's 10s I/O
			// timeout, and two voters stopping together each wait for the
			// other. Closing the transport first answers those RPCs with
			// an error at once; the stores still close only after raft
			// stopped.
			if q.trans != nil {
				_ = q.trans.Close()
			}
			done := make(chan error, 1)
			go func() { done <- f.Error() }()
			select {
			case err := <-done:
				if err != nil {
					q.closeErr = fmt.Errorf("raftmeta: raft shutdown: %w", err)
				}
			case <-time.After(closeTimeout):
				q.closeErr = fmt.Errorf("raftmeta: raft did not stop within %s", closeTimeout)
				return
			}
		}
		q.closeErr = errors.Join(q.closeErr, q.closeResources())
	})
	return q.closeErr
}

// closeFailed stops what it can of a quorum whose store failed
// (store_failure.go): raft's goroutines parked in the store never return,
// so it waits for none of raft and leaves the store open under them.
// Shutting raft down first lets whoever waits to hand raft an entry
// (Apply, Barrier) return before the periodic work is waited for.
func (q *Quorum) closeFailed() error {
	if r := q.raft.Load(); r != nil {
		r.Shutdown()
	}
	if q.trans != nil {
		_ = q.trans.Close()
	}
	if q.stream != nil {
		// Raft's connections too, as a halted process drops them: over
		// them a leader parked in the store would go on asserting its
		// leadership, and no other voter would stand for election.
		_ = q.stream.Abort()
	}
	if q.stop != nil {
		q.stop()
		q.ticks.Wait()
	}
	return errors.New("raftmeta: the metadata store failed; raft and the store were abandoned")
}

func (q *Quorum) closeResources() error {
	var errs []error
	if q.trans != nil {
		// The transport closes its stream layer.
		errs = append(errs, q.trans.Close())
	} else if q.stream != nil {
		errs = append(errs, q.stream.Close())
	}
	if q.store != nil {
		errs = append(errs, q.store.Close())
	}
	return errors.Join(errs...)
}

// quorumLog is the Controller's view of the quorum.
type quorumLog struct{ q *Quorum }

func (l quorumLog) Image() *Image                  { return l.q.fsm.Image() }
func (l quorumLog) IsLeader() bool                 { return l.q.IsLeader() }
func (l quorumLog) Sync(ctx context.Context) error { return l.q.sync(ctx) }

func (l quorumLog) Term() uint64 {
	if r := l.q.raft.Load(); r != nil {
		return r.CurrentTerm()
	}
	return 0
}

// addObserver adds a broker as a raft non-voter (the KRaft observer), or
// updates its address.
func (l quorumLog) addObserver(ctx context.Context, id int32, addr string) error {
	r := l.q.raft.Load()
	if r == nil {
		return ErrNotController
	}
	sid := raft.ServerID(strconv.Itoa(int(id)))
	cf := r.GetConfiguration()
	if err := waitFuture(ctx, cf); err != nil {
		return err
	}
	for _, s := range cf.Configuration().Servers {
		if s.ID == sid && string(s.Address) == addr {
			return nil
		}
	}
	l.q.cfg.Logger.Info("adding broker to the metadata quorum as a non-voter", "broker", id, "addr", addr)
	return waitFuture(ctx, r.AddNonvoter(sid, raft.ServerAddress(addr), 0, timeoutOf(ctx)))
}

func (l quorumLog) Propose(records []Record) <-chan error {
	ch := make(chan error, 1)
	r := l.q.raft.Load()
	if r == nil {
		ch <- ErrNotController
		return ch
	}
	f := r.Apply(EncodeBatch(records), 0)
	go func() {
		err := raftError(f.Error())
		if err == nil {
			// Committed: let the other nodes know now.
			l.q.noticeCommit()
			if rerr, ok := f.Response().(error); ok {
				err = rerr
			}
		}
		ch <- err
	}()
	return ch
}
