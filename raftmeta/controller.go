package raftmeta

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// metadataLog is what the Controller needs of the quorum; tests replace it
// with an FSM applied in place.
type metadataLog interface {
	// Image is the newest applied image.
	Image() *Image
	// IsLeader reports whether writes can be proposed here.
	IsLeader() bool
	// Term identifies the current leadership: broker sessions start again
	// when it changes.
	Term() uint64
	// Sync waits until the image holds every entry committed before it.
	Sync(ctx context.Context) error
	// Propose appends a batch; the channel yields nil once it is applied,
	// or why it was not.
	Propose(records []Record) <-chan error
}

// observerAdder is implemented by a metadata log that can add a raft
// non-voter (the quorum; tests' logs need not).
type observerAdder interface {
	// addObserver makes node id at addr a non-voter unless it already is
	// a member at that address.
	addObserver(ctx context.Context, id int32, addr string) error
}

// maxRecordsPerOp bounds the records one admin request may append
// (QuorumController.MAX_RECORDS_PER_USER_OP).
const maxRecordsPerOp = 10000

// Controller validates admin requests against the newest image and appends
// the records that carry them out (Kafka's QuorumController with its
// ReplicationControlManager, ConfigurationControlManager,
// AclControlManager, ProducerIdControlManager and ClusterControlManager).
// Each domain's requests go to its control manager (controller_managers.go);
// the Controller keeps what they share, the write slot below. Its methods
// take and return kmsg messages like the wire.AdminService they serve. Writes are valid on the raft leader only (NOT_CONTROLLER
// elsewhere; issue 4 forwards them).
//
// Writes run one at a time: each reads the image, builds its records,
// proposes them and waits until they are applied before the next one
// reads the image, so validation never races with another write (the
// single event thread of QuorumController). The FSM re-checks what could
// conflict anyway (names, ids, producer id blocks).
type Controller struct {
	cfg    *Config
	log    metadataLog
	logger *slog.Logger
	rand   io.Reader
	// sem is the write slot: a channel so that waiting for it honours the
	// caller's context.
	sem chan struct{}
	// bootstrapped is set once Config.BootstrapRecords are in the log
	// (bootstrap.go); only write (holding the write slot) touches it.
	bootstrapped bool
	// allLed is the image offset at which ElectUncleanLeaders last found
	// every partition with a leader (allLedKnown), so the next tick at the
	// same offset skips the pass; only write touches it.
	allLed      uint64
	allLedKnown bool

	// The control managers, one per domain (controller_managers.go).
	acls        *aclControl
	scram       *scramControl
	configs     *configurationControl
	cluster     *clusterControl
	replication *replicationControl
	mirrors     *mirrorControl
	quotas      *clientQuotaControl
}

func newController(cfg *Config, log metadataLog, logger *slog.Logger) *Controller {
	r := cfg.Rand
	if r == nil {
		r = rand.Reader
	}
	c := &Controller{cfg: cfg, log: log, logger: logger, rand: r, sem: make(chan struct{}, 1)}
	c.acls = &aclControl{c}
	c.scram = &scramControl{c}
	c.configs = &configurationControl{c}
	c.replication = &replicationControl{c}
	c.mirrors = &mirrorControl{c}
	c.quotas = &clientQuotaControl{c}
	c.cluster = &clusterControl{Controller: c, sessions: newSessions(cfg.Clock, cfg.BrokerSessionTimeout)}
	return c
}

// write runs build on the newest image and appends the records it returns
// (none: nothing is appended), waiting until they are applied. The error
// is ErrNotController, a context error, or the FSM's reason for dropping
// the batch.
func (c *Controller) write(ctx context.Context, build func(img *Image) []Record) error {
	if run, ok := ctx.Value(forwardedRunKey{}).(*forwardedRun); ok {
		return c.writeForwarded(ctx, run, build)
	}
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	release := func() { <-c.sem }
	if !c.log.IsLeader() {
		release()
		return ErrNotController
	}
	if err := c.log.Sync(ctx); err != nil {
		release()
		return err
	}
	if err := c.writeBootstrap(ctx); err != nil {
		release()
		return err
	}
	records := build(c.log.Image())
	if len(records) == 0 {
		release()
		return nil
	}
	done := c.log.Propose(records)
	select {
	case err := <-done:
		release()
		if err != nil {
			c.logger.Warn("metadata write failed", "records", len(records), "err", err)
		}
		return err
	case <-ctx.Done():
		// The batch may still be applied: keep the write slot until it
		// is, so the next write validates against an image holding it.
		go func() { <-done; release() }()
		return ctx.Err()
	}
}

// writeErrorCode is the Kafka error for a failed write.
func writeErrorCode(err error) (int16, string) {
	switch {
	case errors.Is(err, ErrNotController):
		return kerr.NotController.Code, "This node is not the active controller."
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return kerr.RequestTimedOut.Code, "The metadata write timed out: " + err.Error()
	default:
		return kerr.UnknownServerError.Code, err.Error()
	}
}

// withTimeout applies a request's TimeoutMillis; 0 or less leaves ctx
// alone rather than timing out at once.
func withTimeout(ctx context.Context, ms int32) (context.Context, context.CancelFunc) {
	if ms <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, time.Duration(ms)*time.Millisecond)
}

// newUuid is Kafka's Uuid.randomUuid: version 4, never ZERO_UUID or
// METADATA_TOPIC_ID (0, 1), and never starting with '-' in base64 (a
// command-line flag look-alike), and not in use (taken may be nil).
func (c *Controller) newUuid(taken func(Uuid) bool) (Uuid, error) {
	for {
		var u Uuid
		if _, err := io.ReadFull(c.rand, u[:]); err != nil {
			return u, fmt.Errorf("raftmeta: random id: %w", err)
		}
		u[6] = u[6]&0x0f | 0x40
		u[8] = u[8]&0x3f | 0x80
		metadataTopicID := Uuid{15: 1}
		if u.IsZero() || u == metadataTopicID || u.String()[0] == '-' || (taken != nil && taken(u)) {
			continue
		}
		return u, nil
	}
}

func strp(s string) *string { return &s }
