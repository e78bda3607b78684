package raftmeta

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Sender sends a request to the active controller and returns its answer,
// retrying NOT_CONTROLLER and failed connections until ctx ends
// (ctrlrpc.Client).
type Sender interface {
	Send(ctx context.Context, req kmsg.Request) (kmsg.Response, error)
}

// BrokerLifecycleConfig configures a BrokerLifecycle.
type BrokerLifecycleConfig struct {
	NodeID    int32
	ClusterID string
	// IncarnationID identifies this process's run of the broker (zero: a
	// random one, the usual case: every start is a new incarnation).
	IncarnationID Uuid
	// Endpoints are the advertised listeners, with the ports actually
	// bound.
	Endpoints []Endpoint
	// ControllerAddr is this node's CONTROLLER address (Quorum.Addr),
	// registered under ControllerListenerName (default "CONTROLLER") so
	// that the controller can add a non-voter to raft.
	ControllerAddr         string
	ControllerListenerName string
	Rack                   string
	// LogDirs are the ids of the log directories (meta.properties
	// directory.id), the metadata log's first: registered, they give the
	// node its directory id in the quorum (KIP-853).
	LogDirs []Uuid
	// Channel reaches the active controller (Quorum.NewClient).
	Channel Sender
	// MetadataOffset is the offset of the newest metadata image applied
	// here (Quorum.Image().Offset), reported in every heartbeat.
	MetadataOffset func() int64
	// HeartbeatInterval is broker.heartbeat.interval.ms (default 2s).
	// While fenced or shutting down the broker heartbeats every
	// FastHeartbeatInterval (default 50ms), as Kafka's
	// BrokerLifecycleManager does while it catches up.
	HeartbeatInterval     time.Duration
	FastHeartbeatInterval time.Duration
	Logger                *slog.Logger
	Rand                  io.Reader
}

// BrokerLifecycle is a broker's side of registration and heartbeats
// (Kafka's BrokerLifecycleManager): Start registers the broker with the
// active controller and heartbeats in the background; the broker is
// unfenced once it has applied the metadata up to its registration;
// ControlledShutdown asks the controller to move its leaderships away and
// waits for permission to stop.
type BrokerLifecycle struct {
	cfg BrokerLifecycleConfig

	mu             sync.Mutex
	epoch          int64
	fenced         bool
	caughtUp       bool
	wantShutdown   bool
	shouldShutdown bool
	// changed is closed and replaced whenever the state above changes.
	changed chan struct{}

	kick   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
}

// NewBrokerLifecycle returns a lifecycle manager; Start starts it.
func NewBrokerLifecycle(cfg BrokerLifecycleConfig) *BrokerLifecycle {
	if cfg.HeartbeatInterval <= 0 {
		cfg.HeartbeatInterval = 2 * time.Second
	}
	if cfg.FastHeartbeatInterval <= 0 {
		cfg.FastHeartbeatInterval = 50 * time.Millisecond
	}
	cfg.FastHeartbeatInterval = min(cfg.FastHeartbeatInterval, cfg.HeartbeatInterval)
	if cfg.ControllerListenerName == "" {
		cfg.ControllerListenerName = "CONTROLLER"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Reader
	}
	if cfg.MetadataOffset == nil {
		cfg.MetadataOffset = func() int64 { return -1 }
	}
	return &BrokerLifecycle{cfg: cfg, epoch: -1, fenced: true, changed: make(chan struct{}), kick: make(chan struct{}, 1)}
}

// Start registers the broker, retrying until the controller accepts it or
// ctx ends, then heartbeats until Stop. A registration the controller
// refuses for good (INVALID_REGISTRATION, INCONSISTENT_CLUSTER_ID) is an
// error.
func (l *BrokerLifecycle) Start(ctx context.Context) error {
	l.mu.Lock()
	if l.done != nil {
		l.mu.Unlock()
		return errors.New("raftmeta: broker lifecycle already started")
	}
	l.mu.Unlock()
	if l.cfg.IncarnationID.IsZero() {
		if _, err := io.ReadFull(l.cfg.Rand, l.cfg.IncarnationID[:]); err != nil {
			return fmt.Errorf("raftmeta: incarnation id: %w", err)
		}
	}
	epoch, err := l.register(ctx)
	if err != nil {
		return err
	}
	hctx, cancel := context.WithCancel(context.Background())
	l.mu.Lock()
	l.epoch = epoch
	l.cancel = cancel
	l.done = make(chan struct{})
	l.notifyLocked()
	l.mu.Unlock()
	l.cfg.Logger.Info("broker registered", "broker", l.cfg.NodeID, "epoch", epoch, "incarnation", l.cfg.IncarnationID)
	go l.heartbeatLoop(hctx)
	return nil
}

func (l *BrokerLifecycle) registrationRequest() (*kmsg.BrokerRegistrationRequest, error) {
	req := kmsg.NewPtrBrokerRegistrationRequest()
	req.Version = 2
	req.BrokerID = l.cfg.NodeID
	req.ClusterID = l.cfg.ClusterID
	req.IncarnationID = l.cfg.IncarnationID
	if l.cfg.Rack != "" {
		req.Rack = kmsg.StringPtr(l.cfg.Rack)
	}
	for _, d := range l.cfg.LogDirs {
		req.LogDirs = append(req.LogDirs, d)
	}
	for _, e := range l.cfg.Endpoints {
		proto := SecurityProtocolID(e.SecurityProtocol)
		if proto < 0 {
			return nil, fmt.Errorf("raftmeta: listener %s: unknown security protocol %q", e.Listener, e.SecurityProtocol)
		}
		rl := kmsg.NewBrokerRegistrationRequestListener()
		rl.Name, rl.Host, rl.Port, rl.SecurityProtocol = e.Listener, e.Host, uint16(e.Port), proto
		req.Listeners = append(req.Listeners, rl)
	}
	if l.cfg.ControllerAddr != "" {
		host, port, err := net.SplitHostPort(l.cfg.ControllerAddr)
		if err != nil {
			return nil, fmt.Errorf("raftmeta: controller address %q: %w", l.cfg.ControllerAddr, err)
		}
		p, err := strconv.ParseUint(port, 10, 16)
		if err != nil {
			return nil, fmt.Errorf("raftmeta: controller address %q: %w", l.cfg.ControllerAddr, err)
		}
		rl := kmsg.NewBrokerRegistrationRequestListener()
		rl.Name, rl.Host, rl.Port, rl.SecurityProtocol = l.cfg.ControllerListenerName, host, uint16(p), 0
		req.Listeners = append(req.Listeners, rl)
	}
	return req, nil
}

func (l *BrokerLifecycle) register(ctx context.Context) (int64, error) {
	req, err := l.registrationRequest()
	if err != nil {
		return 0, err
	}
	backoff := l.cfg.FastHeartbeatInterval
	for {
		kresp, err := l.cfg.Channel.Send(ctx, req)
		if err != nil {
			return 0, fmt.Errorf("raftmeta: register broker %d: %w", l.cfg.NodeID, err)
		}
		resp := kresp.(*kmsg.BrokerRegistrationResponse)
		switch resp.ErrorCode {
		case 0:
			return resp.BrokerEpoch, nil
		case kerr.InvalidRegistration.Code, kerr.InconsistentClusterID.Code, kerr.InvalidRequest.Code:
			return 0, fmt.Errorf("raftmeta: register broker %d: %w", l.cfg.NodeID, kerr.ErrorForCode(resp.ErrorCode))
		}
		l.cfg.Logger.Info("broker registration failed; retrying", "broker", l.cfg.NodeID, "err", kerr.ErrorForCode(resp.ErrorCode))
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("raftmeta: register broker %d: %w (last failure: %w)", l.cfg.NodeID, ctx.Err(), kerr.ErrorForCode(resp.ErrorCode))
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, l.cfg.HeartbeatInterval)
	}
}

func (l *BrokerLifecycle) heartbeatLoop(ctx context.Context) {
	defer close(l.done)
	for {
		l.heartbeat(ctx)
		l.mu.Lock()
		interval := l.cfg.HeartbeatInterval
		if l.fenced || l.wantShutdown {
			interval = l.cfg.FastHeartbeatInterval
		}
		stopNow := l.shouldShutdown
		l.mu.Unlock()
		if stopNow {
			// The controller fenced the broker for its shutdown: nothing
			// more to say (Kafka stops heartbeating too).
			return
		}
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-l.kick:
			t.Stop()
		case <-t.C:
		}
	}
}

// heartbeat sends one heartbeat and records the answer.
func (l *BrokerLifecycle) heartbeat(ctx context.Context) {
	l.mu.Lock()
	req := kmsg.NewPtrBrokerHeartbeatRequest()
	req.Version = 1
	req.BrokerID = l.cfg.NodeID
	req.BrokerEpoch = l.epoch
	req.WantShutdown = l.wantShutdown
	l.mu.Unlock()
	req.CurrentMetadataOffset = l.cfg.MetadataOffset()
	hctx, cancel := context.WithTimeout(ctx, max(2*l.cfg.HeartbeatInterval, time.Second))
	defer cancel()
	kresp, err := l.cfg.Channel.Send(hctx, req)
	if err != nil {
		if ctx.Err() == nil {
			l.cfg.Logger.Warn("broker heartbeat failed", "broker", l.cfg.NodeID, "err", err)
		}
		return
	}
	resp := kresp.(*kmsg.BrokerHeartbeatResponse)
	if resp.ErrorCode != 0 {
		l.cfg.Logger.Warn("broker heartbeat refused", "broker", l.cfg.NodeID, "epoch", req.BrokerEpoch, "err", kerr.ErrorForCode(resp.ErrorCode))
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if resp.IsFenced != l.fenced {
		l.cfg.Logger.Info("broker fencing changed", "broker", l.cfg.NodeID, "fenced", resp.IsFenced)
	}
	if l.fenced != resp.IsFenced || l.caughtUp != resp.IsCaughtUp || l.shouldShutdown != resp.ShouldShutdown {
		l.fenced, l.caughtUp, l.shouldShutdown = resp.IsFenced, resp.IsCaughtUp, resp.ShouldShutdown
		l.notifyLocked()
	}
}

func (l *BrokerLifecycle) notifyLocked() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// wait waits until cond holds (checked under the lock) or ctx ends.
func (l *BrokerLifecycle) wait(ctx context.Context, cond func() bool) error {
	for {
		l.mu.Lock()
		ok, ch := cond(), l.changed
		l.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

// WaitUnfenced waits until the controller unfences the broker: it has
// caught up with the metadata log, and may lead partitions and join ISRs.
func (l *BrokerLifecycle) WaitUnfenced(ctx context.Context) error {
	if err := l.wait(ctx, func() bool { return !l.fenced && l.epoch >= 0 }); err != nil {
		return fmt.Errorf("raftmeta: broker %d waiting to be unfenced: %w", l.cfg.NodeID, err)
	}
	return nil
}

// ControlledShutdown asks the controller to move this broker's leaderships
// to other replicas and waits until it says the broker may stop
// (ShouldShutdown: the broker is then fenced); the heartbeats stop there.
// A broker that never registered returns at once.
func (l *BrokerLifecycle) ControlledShutdown(ctx context.Context) error {
	l.mu.Lock()
	if l.done == nil {
		l.mu.Unlock()
		return nil
	}
	l.wantShutdown = true
	l.mu.Unlock()
	select {
	case l.kick <- struct{}{}:
	default:
	}
	if err := l.wait(ctx, func() bool { return l.shouldShutdown }); err != nil {
		return fmt.Errorf("raftmeta: controlled shutdown of broker %d: %w", l.cfg.NodeID, err)
	}
	l.cfg.Logger.Info("controlled shutdown granted", "broker", l.cfg.NodeID)
	return nil
}

// Stop stops heartbeating (the controller fences the broker when its
// session expires, unless ControlledShutdown already had it fenced).
func (l *BrokerLifecycle) Stop() {
	l.mu.Lock()
	cancel, done := l.cancel, l.done
	l.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// Epoch is the broker epoch the controller assigned (-1 before Start).
func (l *BrokerLifecycle) Epoch() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.epoch
}

// Fenced reports whether the last heartbeat answer said fenced (true
// before the first one).
func (l *BrokerLifecycle) Fenced() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fenced
}

// IncarnationID is this run's incarnation id (set by Start when zero).
func (l *BrokerLifecycle) IncarnationID() Uuid { return l.cfg.IncarnationID }
