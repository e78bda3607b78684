// Package brokertest runs Strait brokers in-process for tests: a real
// broker.Node on loopback ports chosen by the kernel, data in a temporary
// directory, and franz-go clients pointed at it. Tests talk to it over real
// sockets exactly as any Kafka client does (DESIGN.md §5).
package brokertest

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	pebblevfs "github.com/cockroachdb/pebble/v2/vfs"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker"
	"github.com/strait-io/strait/broker/config"
	"github.com/strait-io/strait/coordinator"
	"github.com/strait-io/strait/replication/share"
	"github.com/strait-io/strait/storage/vfs"
)

// Raft timing for tests: a single voter elects itself within a few tens of
// milliseconds instead of raft's default second.
const (
	raftHeartbeatTimeout = 50 * time.Millisecond
	raftElectionTimeout  = 50 * time.Millisecond
)

// startTimeout bounds Start; stopTimeout bounds a graceful Stop (the
// broker promises exit within 5 s of SIGTERM).
const (
	startTimeout = 20 * time.Second
	stopTimeout  = 5 * time.Second
)

// Option changes how Start configures the broker.
type Option func(*options)

type options struct {
	dir      string
	sets     []string
	metrics  bool
	logLevel slog.Level
	fs       func(nodeID int32) vfs.FS
	metaFS   func(nodeID int32) pebblevfs.FS
	shares   share.Persister
	// clientOpts come first in every client the harness makes.
	clientOpts []kgo.Opt

	// Set by StartCluster for its members.
	nodeID      int32
	voters      func(selfControllerPort int) string
	dialer      func(ctx context.Context, network, addr string) (net.Conn, error)
	raftTimeout time.Duration
	clusterSets []string
	onStarted   func(b *Broker)
	logPrefix   string

	shareGroups coordinator.ShareStatePersister
}

// WithClientOpts adds opts to every client the harness makes for the
// broker or cluster (Client, Admin), before the caller's: e.g.
// kgo.DialTLSConfig when the listener clients use is SSL.
func WithClientOpts(opts ...kgo.Opt) Option {
	return func(o *options) { o.clientOpts = append(o.clientOpts, opts...) }
}

// WithConfig sets broker configs, each "key=value" as `strait serve --set`
// takes it. Later values win over earlier ones and over the harness's
// defaults.
func WithConfig(kvs ...string) Option {
	return func(o *options) { o.sets = append(o.sets, kvs...) }
}

// WithDir serves from dir instead of a new temporary directory, e.g. to
// start a second broker on the data a stopped one left.
func WithDir(dir string) Option { return func(o *options) { o.dir = dir } }

// WithMetrics enables the metrics listener on a free loopback port (see
// Broker.MetricsAddr).
func WithMetrics() Option { return func(o *options) { o.metrics = true } }

// WithFS gives each node the file system fs returns for its node id (an
// ErrorFS to fail a node's disk, say) instead of the operating system's.
// It is asked at every start, restarts included.
func WithFS(fs func(nodeID int32) vfs.FS) Option { return func(o *options) { o.fs = fs } }

// WithMetadataFS gives each node the file system fs returns for its node
// id for the raft log and stable store in its metadata log directory (an
// errorfs to fail it, say). It is asked at every start, restarts included.
func WithMetadataFS(fs func(nodeID int32) pebblevfs.FS) Option {
	return func(o *options) { o.metaFS = fs }
}

// WithSharePersister makes the broker serve ShareFetch and
// ShareAcknowledge, storing share partition state with p
// (broker.Options.SharePersister). The same p serves every start, so the
// state outlives a restart as the share coordinator's would.
func WithSharePersister(p share.Persister) Option { return func(o *options) { o.shares = p } }

// WithShareGroupPersister makes the broker serve share groups
// (ShareGroupHeartbeat, ShareGroupDescribe and the share group offset
// APIs), the group coordinator storing share state with p
// (broker.Options.ShareGroupPersister). The same p serves every start and
// every node, as the share coordinator would.
func WithShareGroupPersister(p coordinator.ShareStatePersister) Option {
	return func(o *options) { o.shareGroups = p }
}

// WithLogLevel sets the lowest level of the broker's log lines kept for
// the failure report (default Info).
func WithLogLevel(l slog.Level) Option { return func(o *options) { o.logLevel = l } }

// Broker is one in-process Strait node. Its methods are not safe for
// concurrent use with Restart/Stop/Crash.
type Broker struct {
	opts options
	logs *logBuffer

	mu    sync.Mutex
	node  *broker.Node
	addrs map[string]string
}

// Start starts a single-node broker (broker and controller roles, one
// voter) on 127.0.0.1 with PLAINTEXT and CONTROLLER listeners on free
// ports, and stops it when the test ends. It fails the test if the broker
// does not come up.
func Start(t testing.TB, opts ...Option) *Broker {
	t.Helper()
	o := options{logLevel: slog.LevelInfo}
	for _, opt := range opts {
		opt(&o)
	}
	if o.dir == "" {
		o.dir = t.TempDir()
	}
	b := &Broker{opts: o, logs: newLogBuffer(logBufferMax)}
	t.Cleanup(func() {
		if err := b.stop(); err != nil {
			t.Errorf("brokertest: graceful stop at the end of the test: %v", err)
		}
		if t.Failed() {
			t.Logf("broker log (last %d KiB):\n%s", logBufferMax>>10, b.logs.String())
		}
	})
	if err := b.start(0, 0, 0); err != nil {
		t.Fatalf("brokertest: %v", err)
	}
	return b
}

// start builds the configuration and starts a node; non-zero ports pin
// the listeners (a restart keeps the addresses clients know).
func (b *Broker) start(plaintextPort, controllerPort, metricsPort int) error {
	id := max(b.opts.nodeID, 1)
	// Port 0 in this node's own voter entry takes the port the CONTROLLER
	// listener bound (raftmeta.Config.Voters).
	voters := fmt.Sprintf("%d@127.0.0.1:%d", id, controllerPort)
	if b.opts.voters != nil {
		voters = b.opts.voters(controllerPort)
	}
	roles := "broker"
	for _, v := range strings.Split(voters, ",") {
		if strings.HasPrefix(v, fmt.Sprintf("%d@", id)) {
			roles = "broker,controller"
		}
	}
	listeners := fmt.Sprintf("PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d", plaintextPort, controllerPort)
	if roles == "broker" {
		// A broker-only node has no CONTROLLER listener (Kafka): its raft
		// port is picked at start.
		listeners = fmt.Sprintf("PLAINTEXT://127.0.0.1:%d", plaintextPort)
	}
	sets := []string{
		fmt.Sprintf("node.id=%d", id),
		"process.roles=" + roles,
		"log.dirs=" + b.opts.dir,
		"listeners=" + listeners,
		"controller.listener.names=CONTROLLER",
		"controller.quorum.voters=" + voters,
		"group.initial.rebalance.delay.ms=0",
		"metrics.listener=",
	}
	sets = append(sets, b.opts.clusterSets...)
	if b.opts.metrics {
		sets = append(sets, fmt.Sprintf("metrics.listener=127.0.0.1:%d", metricsPort))
	}
	sets = append(sets, b.opts.sets...)
	cfg, err := config.Load("", sets)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(b.logs, &slog.HandlerOptions{Level: b.opts.logLevel}))
	if b.opts.logPrefix != "" {
		logger = logger.With("node", b.opts.logPrefix)
	}
	var fsys vfs.FS
	if b.opts.fs != nil {
		fsys = b.opts.fs(b.opts.nodeID)
	}
	var metaFS pebblevfs.FS
	if b.opts.metaFS != nil {
		metaFS = b.opts.metaFS(b.opts.nodeID)
	}
	raftTimeout := raftHeartbeatTimeout
	if b.opts.raftTimeout > 0 {
		raftTimeout = b.opts.raftTimeout
	}
	node := broker.NewNode(cfg, broker.Options{
		Logger:               logger,
		MetadataFS:           metaFS,
		RaftHeartbeatTimeout: raftTimeout,
		RaftElectionTimeout:  raftTimeout,
		Dialer:               b.opts.dialer,
		FS:                   fsys,
		SharePersister:       b.opts.shares,
		ShareGroupPersister:  b.opts.shareGroups,
	})
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := node.Start(ctx); err != nil {
		return fmt.Errorf("starting broker in %s: %w", b.opts.dir, err)
	}
	b.mu.Lock()
	b.node, b.addrs = node, node.Addrs()
	b.mu.Unlock()
	if b.opts.onStarted != nil {
		b.opts.onStarted(b)
	}
	return nil
}

// Addr is the PLAINTEXT listener's host:port, the bootstrap address.
func (b *Broker) Addr() string { return b.addr("PLAINTEXT") }

// ControllerAddr is the CONTROLLER listener's host:port.
func (b *Broker) ControllerAddr() string { return b.addr("CONTROLLER") }

// MetricsAddr is the metrics listener's host:port ("" unless WithMetrics).
func (b *Broker) MetricsAddr() string { return b.addr("metrics") }

func (b *Broker) addr(name string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.addrs[name]
}

// Dir is the broker's log directory.
func (b *Broker) Dir() string { return b.opts.dir }

// Node is the running node (nil after Stop or Crash).
func (b *Broker) Node() *broker.Node {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.node
}

// Logs returns what the broker logged so far (the newest part of it).
func (b *Broker) Logs() string { return b.logs.String() }

// Client returns a kgo client bootstrapped at the broker, closed when the
// test ends. opts come after the harness's, so they win.
func (b *Broker) Client(t testing.TB, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	return newClient(t, []string{b.Addr()}, append(slices.Clone(b.opts.clientOpts), opts...))
}

// newClient is a kgo client of seeds, closed when the test ends.
func newClient(t testing.TB, seeds []string, opts []kgo.Opt) *kgo.Client {
	t.Helper()
	all := append([]kgo.Opt{
		kgo.SeedBrokers(seeds...),
		// Restart and crash tests expect the client to find the broker
		// again quickly.
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }),
	}, opts...)
	cl, err := kgo.NewClient(all...)
	if err != nil {
		t.Fatalf("brokertest: new client: %v", err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// Admin returns a kadm client over a new kgo client, closed when the test
// ends. kgo answers metadata requests from its cache for MetadataMinAge
// (5 s by default); the admin client's is 10 ms, so what it lists follows
// the changes a test just made.
func (b *Broker) Admin(t testing.TB, opts ...kgo.Opt) *kadm.Client {
	t.Helper()
	return newAdmin(t, []string{b.Addr()}, append(slices.Clone(b.opts.clientOpts), opts...))
}

func newAdmin(t testing.TB, seeds []string, opts []kgo.Opt) *kadm.Client {
	t.Helper()
	return kadm.NewClient(newClient(t, seeds, append([]kgo.Opt{kgo.MetadataMinAge(10 * time.Millisecond)}, opts...)))
}

// Stop stops the broker gracefully (flush, checkpoints, clean shutdown
// marker) and fails the test if that reports an error. Stopping twice is
// allowed.
func (b *Broker) Stop(t testing.TB) {
	t.Helper()
	if err := b.stop(); err != nil {
		t.Fatalf("brokertest: stop: %v", err)
	}
}

func (b *Broker) stop() error {
	b.mu.Lock()
	node := b.node
	b.node = nil
	b.mu.Unlock()
	if node == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
	defer cancel()
	return node.Stop(ctx)
}

// Restart stops the broker gracefully and starts it again on the same
// directory and the same listener ports, so clients holding Addr() find
// it again.
func (b *Broker) Restart(t testing.TB) {
	t.Helper()
	b.Stop(t)
	b.restart(t)
}

// Crash stops the broker the way a killed process stops (broker.Node's
// Abandon): the listeners and the quorum close, the logs are abandoned
// without flushing, checkpointing or writing the clean shutdown marker.
// Start it again with StartAgain: the next start recovers the logs. What
// was written before is in the page cache, as after a SIGKILL; losing it
// (power loss) is the storage package's crash tests' business. Requests
// in flight may be cut anywhere: nothing reaches the log directory after
// Crash returns.
func (b *Broker) Crash(t testing.TB) {
	t.Helper()
	b.mu.Lock()
	node := b.node
	b.node = nil
	b.mu.Unlock()
	if node == nil {
		t.Fatalf("brokertest: crash: broker is not running")
	}
	node.Abandon()
}

// StartAgain starts a stopped or crashed broker on the same directory and
// ports.
func (b *Broker) StartAgain(t testing.TB) {
	t.Helper()
	b.restart(t)
}

func (b *Broker) restart(t testing.TB) {
	t.Helper()
	if b.Node() != nil {
		t.Fatalf("brokertest: broker is still running")
	}
	plain, ctrl, metrics := port(b.Addr()), port(b.ControllerAddr()), port(b.MetricsAddr())
	// The ports were just released; another process may grab one in
	// between (rare on loopback), so retry for a moment.
	var err error
	for attempt := 0; attempt < 50; attempt++ {
		if err = b.start(plain, ctrl, metrics); err == nil || !strings.Contains(err.Error(), "address already in use") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("brokertest: restart: %v", err)
	}
}

func port(addr string) int {
	if addr == "" {
		return 0
	}
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(p)
	return n
}
