package manager

import (
	"errors"
	"log/slog"
	"time"

	"github.com/strait-io/strait/mirror/source"

	"github.com/strait-io/strait/mirror/partition"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/replication/fetcher"
	"github.com/strait-io/strait/storage/clock"
)

// Config is a Manager's dependencies and settings.
type Config struct {
	// NodeID is this broker's id: the manager drives the mirror partitions
	// whose leader it is.
	NodeID int32
	// Image returns the current metadata image; OnMetadata passes the new
	// ones, Image is read once by Start.
	Image       func() *raftmeta.Image
	Destination Destination
	States      StateStore
	Controller  Controller

	// Retry is the per-partition machine's retry policy: the broker configs
	// mirror.failed.retry.initial.backoff.ms (100), .max.backoff.ms
	// (300000), .max.attempts (20; 0 → partition.NoAutomaticRetries).
	// Rand is ignored: the manager seeds one from Seed.
	Retry partition.Config
	// FetchBackoff is replica.fetch.backoff.ms for the mirror fetchers.
	FetchBackoff time.Duration
	// Fetch sizes of the mirror fetch (replica.fetch.wait.max.ms,
	// .min.bytes, .response.max.bytes, .max.bytes); zero takes the
	// follower defaults.
	FetchMaxWaitMs, FetchMinBytes, FetchMaxBytes, FetchPartitionMaxBytes int32
	// ISRPollInterval is how often WaitForISRTruncation polls ReplicasAt;
	// default 50 ms.
	ISRPollInterval time.Duration
	// ClusterID is this (the destination) cluster's id: a mirror whose
	// source answers with it is refused (source.ErrSelfMirror).
	ClusterID string
	// SourceDialer, when not nil, makes the source clients' connections
	// (the broker passes its dialer, so a test's fault network cuts the
	// mirror link too); a mirror's TLS runs over it.
	SourceDialer source.Dialer

	Clock  clock.Clock
	Logger *slog.Logger
	// Seed seeds the retry jitter (0 is a seed like any other).
	Seed int64
}

// DefaultISRPollInterval is Config.ISRPollInterval's default.
const DefaultISRPollInterval = 50 * time.Millisecond

func (c Config) withDefaults() (Config, error) {
	switch {
	case c.Destination == nil:
		return c, errors.New("mirror manager: Destination is required")
	case c.States == nil:
		return c, errors.New("mirror manager: States is required")
	case c.Controller == nil:
		return c, errors.New("mirror manager: Controller is required")
	}
	if c.Image == nil {
		c.Image = raftmeta.EmptyImage
	}
	if c.FetchBackoff <= 0 {
		c.FetchBackoff = fetcher.DefaultBackoff
	}
	if c.ISRPollInterval <= 0 {
		c.ISRPollInterval = DefaultISRPollInterval
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c, nil
}
