package sim

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/clock"
	"github.com/strait-io/strait/storage/vfs"
)

const (
	topicName = "t"
	// stepDuration is how far the clock moves each step.
	stepDuration = 50 * time.Millisecond
	// replicaLagMs is replica.lag.time.max.ms: 40 steps.
	replicaLagMs = 2000
	// sessionTimeoutSteps is broker.session.timeout.ms in steps.
	sessionTimeoutSteps = 20
	// fetchMaxBytes is replica.fetch.max.bytes, small so catching up takes
	// several fetches.
	fetchMaxBytes = 512
	// traceLines is how much of the trace an error shows.
	traceLines = 100000
)

var (
	topicID = raftmeta.Uuid{0x5a}
	tp      = storage.TopicPartition{Topic: topicName, Partition: 0}
)

// Options configure a simulation.
type Options struct {
	Seed uint64
	// Steps is the number of random steps before healing (default 200).
	Steps int
	// Replicas is the replication factor (default 3).
	Replicas int
	// MinISR is min.insync.replicas (default 2).
	MinISR int32
	// Logger receives the replica managers' logs (default discarded).
	Logger *slog.Logger
}

// Cluster is a simulated cluster of one partition.
type Cluster struct {
	opts   Options
	rng    *rand.Rand
	clock  *clock.Manual
	logger *slog.Logger
	net    *network
	ctrl   *controller
	nodes  []*node
	step   int

	noTruncationOnFetch bool

	pending      []*pendingProduce
	acked        []ackedRecord
	ackedChecked int
	nextValue    int
	committed    committedLog

	trace []string
	stats Stats
}

// Stats count what a run did, so tests can tell a simulation that
// exercised the protocol from one that idled.
type Stats struct {
	Produced, Acknowledged         int
	Crashes, PowerLosses, Restarts int
	// Truncations counts logs that got shorter on a running node (a
	// follower removing a divergent suffix); LeaderEpochs is the final
	// leader epoch.
	Truncations  int
	LeaderEpochs int32
	Committed    int64
}

// Add sums two Stats.
func (s Stats) Add(o Stats) Stats {
	return Stats{s.Produced + o.Produced, s.Acknowledged + o.Acknowledged, s.Crashes + o.Crashes,
		s.PowerLosses + o.PowerLosses, s.Restarts + o.Restarts, s.Truncations + o.Truncations,
		s.LeaderEpochs + o.LeaderEpochs, s.Committed + o.Committed}
}

// New builds a cluster for a seed: the brokers registered, the topic
// created, every node started and caught up with the metadata.
func New(opts Options) (*Cluster, error) { return newCluster(opts, nil) }

// newCluster is New with a hook that adjusts the random settings before
// the nodes start (scripted tests).
func newCluster(opts Options, setup func(c *Cluster, replicas []int32)) (*Cluster, error) {
	if opts.Steps == 0 {
		opts.Steps = 200
	}
	if opts.Replicas == 0 {
		opts.Replicas = 3
	}
	if opts.MinISR == 0 {
		opts.MinISR = 2
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Cluster{
		opts:      opts,
		rng:       rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15)),
		clock:     clock.NewManual(time.UnixMilli(1_700_000_000_000)),
		logger:    opts.Logger,
		committed: committedLog{values: map[int64]string{}},
	}
	c.net = &network{c: c, cut: map[[2]int32]bool{}, faulty: true}
	c.net.dropRate = []float64{0, 0.02, 0.1}[c.rng.IntN(3)]
	c.net.maxDelay = []int{0, 2, 5}[c.rng.IntN(3)]
	c.noTruncationOnFetch = c.rng.IntN(4) == 0
	c.ctrl = newController(c)
	ids := make([]int32, opts.Replicas)
	for i := range ids {
		ids[i] = int32(i + 1)
	}
	c.rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	if setup != nil {
		setup(c, ids)
	}
	c.ctrl.bootstrap(ids)
	for i := 1; i <= opts.Replicas; i++ {
		n := &node{c: c, id: int32(i), fs: vfs.NewMem()}
		c.nodes = append(c.nodes, n)
		if err := n.start(); err != nil {
			return nil, err
		}
		n.brokerEpoch = c.ctrl.img.Brokers[n.id].Epoch
		n.catchUp()
	}
	c.tracef("seed %d: replicas %v, min ISR %d, drop %.2f, delay %d, truncation on fetch %v", opts.Seed, ids, opts.MinISR,
		c.net.dropRate, c.net.maxDelay, !c.noTruncationOnFetch)
	return c, nil
}

func (c *Cluster) ids() []int32 {
	out := make([]int32, len(c.nodes))
	for i := range c.nodes {
		out[i] = int32(i + 1)
	}
	return out
}

func (c *Cluster) node(id int32) *node { return c.nodes[id-1] }

// lose reports whether a faulty network loses a message.
func (c *Cluster) lose() bool { return c.net.faulty && c.rng.Float64() < c.net.dropRate }

func (c *Cluster) tracef(format string, args ...any) {
	c.trace = append(c.trace, fmt.Sprintf("[%d] ", c.step)+fmt.Sprintf(format, args...))
	if len(c.trace) > 4*traceLines {
		c.trace = append(c.trace[:0], c.trace[len(c.trace)-traceLines:]...)
	}
}

// fail wraps a violation with the seed and the recent trace.
func (c *Cluster) fail(err error) error {
	tail := c.trace
	if len(tail) > traceLines {
		tail = tail[len(tail)-traceLines:]
	}
	return fmt.Errorf("seed %d, step %d: %w\nrecent events:\n%s", c.opts.Seed, c.step, err, strings.Join(tail, "\n"))
}

// Run runs the random steps, heals everything and checks the end state.
func Run(opts Options) (Stats, error) {
	c, err := New(opts)
	if err != nil {
		return Stats{}, err
	}
	err = c.Run()
	return c.Stats(), err
}

// Stats is what the run did so far.
func (c *Cluster) Stats() Stats {
	s := c.stats
	s.Acknowledged = len(c.acked)
	s.LeaderEpochs = c.ctrl.partition().LeaderEpoch
	s.Committed = c.committed.end
	return s
}

// Run runs the simulation: the random steps, then healing.
func (c *Cluster) Run() error {
	for i := 0; i < c.opts.Steps; i++ {
		c.randomAction()
		if err := c.advance(); err != nil {
			return c.fail(err)
		}
	}
	return c.heal()
}

// advance ends a step: the background of every running node (heartbeats,
// metadata, the controller's session checks), due messages, produce
// waits, then the checks.
func (c *Cluster) advance() error {
	c.background()
	var err error
	c.net.deliverDue(func() {
		if err == nil {
			c.checkPending()
			err = c.check()
		}
	})
	if err != nil {
		return err
	}
	c.checkPending()
	if err := c.check(); err != nil {
		return err
	}
	c.clearRecovered()
	c.step++
	c.clock.Advance(stepDuration)
	return nil
}

// background is what runs on its own in a broker: heartbeats and metadata
// catch-up over working controller links (sometimes lagging), and the
// controller's session expiry.
func (c *Cluster) background() {
	for _, n := range c.nodes {
		if !n.up || !c.net.connected(n.id, controllerID) {
			continue
		}
		if n.brokerEpoch == 0 {
			n.brokerEpoch = c.ctrl.register(n.id)
		}
		if c.net.faulty && c.rng.IntN(3) == 0 {
			continue // this node's metadata fetch lags this step
		}
		n.catchUp()
		var applied uint64
		if n.applied != nil {
			applied = n.applied.Offset
		}
		c.ctrl.heartbeat(n.id, applied)
	}
	c.ctrl.tick()
}

// clearRecovered: a node that lost data is intact again once back in the
// ISR (it caught up with the high watermark and the leader epoch start).
func (c *Cluster) clearRecovered() {
	for _, n := range c.nodes {
		if n.damaged && n.up && slices.Contains(c.ctrl.partition().ISR, n.id) {
			n.damaged = false
			c.tracef("node %d recovered its data", n.id)
		}
	}
}

func (c *Cluster) upNodes() []*node {
	var out []*node
	for _, n := range c.nodes {
		if n.up {
			out = append(out, n)
		}
	}
	return out
}

func (c *Cluster) pick(ns []*node) *node {
	if len(ns) == 0 {
		return nil
	}
	return ns[c.rng.IntN(len(ns))]
}

// randomAction does one random thing.
func (c *Cluster) randomAction() {
	up := c.upNodes()
	switch r := c.rng.IntN(100); {
	case r < 20:
		if n := c.pick(up); n != nil {
			c.produce(n)
		}
	case r < 60:
		c.stepFetchers(c.pick(up))
	case r < 70:
		c.runTask(c.pick(up))
	case r < 74:
		if n := c.pick(up); n != nil {
			n.rm.MaybeShrinkIsr()
		}
	case r < 77:
		if n := c.pick(up); n != nil {
			// The broker writes each file on its own schedule
			// (ReplicaManager.Start): the passes run apart, so a crash
			// can find one file fresher than another.
			passes := []func() error{n.logs.CheckpointHighWatermarks, n.logs.CheckpointRecoveryPoints,
				n.logs.CheckpointLogStartOffsets, n.logs.Checkpoint}
			if err := passes[c.rng.IntN(len(passes))](); err != nil {
				c.tracef("node %d: checkpoint failed: %v", n.id, err)
			}
		}
	case r < 80:
		if n := c.pick(up); n != nil {
			if p, ok := n.partition(); ok {
				_ = p.Log().Flush()
			}
		}
	case r < 82:
		if len(up) > 1 {
			c.crash(c.pick(up))
		}
	case r < 87:
		c.restartOne()
	case r < 89:
		c.cutRandomLink()
	case r < 94:
		if links := c.net.cutLinks(); len(links) > 0 {
			l := links[c.rng.IntN(len(links))]
			c.net.setCut(l[0], l[1], false)
			c.tracef("heal link %d-%d", l[0], l[1])
		}
	case r < 96:
		c.ctrl.moveLeader()
	default:
		// Time passes: nothing happens but the background.
	}
}

// stepFetchers starts the next request of every idle fetcher of n.
func (c *Cluster) stepFetchers(n *node) {
	if n == nil {
		return
	}
	for _, d := range n.syncDrivers() {
		d.step()
	}
}

// runTask runs the oldest AlterPartition send waiting on n.
func (c *Cluster) runTask(n *node) {
	if n == nil || len(n.tasks) == 0 {
		return
	}
	f := n.tasks[0]
	n.tasks = n.tasks[1:]
	f()
}

// crash kills a node: a power loss when committed data stays safe (see
// the package comment), else a process kill.
func (c *Cluster) crash(n *node) {
	p := c.ctrl.partition()
	damaged := 0
	for _, m := range c.nodes {
		if m.damaged {
			damaged++
		}
	}
	intactPeer := false
	for _, id := range p.ISR {
		if m := c.node(id); id != n.id && m.up && !m.damaged {
			intactPeer = true
		}
	}
	powerLoss := c.rng.IntN(2) == 0 && damaged < int(c.opts.MinISR)-1 && intactPeer
	c.tracef("node %d crashes (power loss %v)", n.id, powerLoss)
	c.stats.Crashes++
	if powerLoss {
		c.stats.PowerLosses++
	}
	// The node's in-flight produce waits fail with it.
	n.crash(powerLoss)
	if powerLoss {
		// Its session would expire before it could register again.
		c.ctrl.fence(n.id, "power loss")
	}
}

// restartOne restarts a down node whose session has expired (a broker
// cannot register while its previous session lives).
func (c *Cluster) restartOne() {
	var down []*node
	for _, n := range c.nodes {
		if !n.up && !c.ctrl.alive(n.id) {
			down = append(down, n)
		}
	}
	if n := c.pick(down); n != nil {
		c.restart(n)
	}
}

func (c *Cluster) restart(n *node) {
	c.stats.Restarts++
	if err := n.start(); err != nil {
		panic(fmt.Sprintf("seed %d: restarting node %d: %v", c.opts.Seed, n.id, err))
	}
	if p, ok := n.logs.Log(tp); ok {
		c.tracef("node %d restarts: log [%d, %d) HW %d", n.id, p.LogStartOffset(), p.LogEndOffset(), p.HighWatermark())
	} else {
		c.tracef("node %d restarts with no log", n.id)
	}
}

// cutRandomLink cuts a link between two nodes or a node and the
// controller, at most two at a time.
func (c *Cluster) cutRandomLink() {
	if len(c.net.cutLinks()) >= 2 {
		return
	}
	a := int32(c.rng.IntN(len(c.nodes) + 1))
	b := int32(1 + c.rng.IntN(len(c.nodes)))
	if a == b {
		return
	}
	c.net.setCut(a, b, true)
	c.tracef("cut link %d-%d", min(a, b), max(a, b))
}

// heal ends the faults: every link works and nothing is dropped or
// delayed, every node restarts, and the nodes run until the replicas
// converge (or too long passes).
func (c *Cluster) heal() error {
	c.tracef("healing")
	c.net.faulty = false
	for _, l := range c.net.cutLinks() {
		c.net.setCut(l[0], l[1], false)
	}
	for i := 0; i < 400; i++ {
		for _, n := range c.nodes {
			if !n.up && !c.ctrl.alive(n.id) {
				c.restart(n)
			}
		}
		for _, n := range c.upNodes() {
			c.stepFetchers(n)
			for len(n.tasks) > 0 {
				c.runTask(n)
			}
			if i%10 == 9 {
				n.rm.MaybeShrinkIsr()
			}
		}
		if err := c.advance(); err != nil {
			return c.fail(err)
		}
		if c.converged() {
			if err := c.checkFinal(); err != nil {
				return c.fail(err)
			}
			return nil
		}
	}
	p := c.ctrl.partition()
	return c.fail(fmt.Errorf("no convergence after healing: leader %d epoch %d isr %v", p.Leader, p.LeaderEpoch, p.ISR))
}

// converged: every node runs the newest metadata, the ISR is every
// replica, and every replica has the leader's log and high watermark.
func (c *Cluster) converged() bool {
	p := c.ctrl.partition()
	if p.Leader < 0 || len(p.ISR) != len(c.nodes) || len(c.pending) > 0 {
		return false
	}
	lp, ok := c.node(p.Leader).partition()
	if !ok {
		return false
	}
	end := lp.Log().LogEndOffset()
	for _, n := range c.nodes {
		np, ok := n.partition()
		if !ok || n.applied == nil || n.applied.Offset != c.ctrl.img.Offset || np.IsrChangeInflight() ||
			np.Log().LogEndOffset() != end || np.HighWatermark() != end {
			return false
		}
	}
	return true
}

func itoa(v int32) string { return strconv.Itoa(int(v)) }
