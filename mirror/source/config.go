package source

import (
	"errors"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/replication/fetcher"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/clock"
)

// Defaults of the source metadata refreshes.
const (
	// DefaultMetadataMinInterval spaces the refreshes errors trigger, so a
	// burst of NOT_LEADER answers costs one Metadata request.
	DefaultMetadataMinInterval = 100 * time.Millisecond
	// DefaultMetadataMaxAge is the consumer's metadata.max.age.ms: metadata
	// older than this is refreshed before the next request even without an
	// error (a leader moved back by a preferred election answers the old
	// route with NOT_LEADER anyway; this only saves that round).
	DefaultMetadataMaxAge = 5 * time.Minute
	// DefaultMetadataTimeout bounds one refresh, retries included, so an
	// unreachable source fails a fetch round instead of holding it.
	DefaultMetadataTimeout = 10 * time.Second
)

// Config is a mirror's source connection and fetch settings.
type Config struct {
	// MirrorName names the mirror; the client id is "strait-mirror-<name>".
	MirrorName string
	// BootstrapServers is the mirror's bootstrap.servers.
	BootstrapServers []string
	// ClientOpts are the caller's client options, applied after the
	// endpoint's own: SASL (kgo.SASL), TLS (kgo.DialTLSConfig), a dialer,
	// timeouts, built from the mirror's security.protocol, sasl.* and ssl.*
	// settings.
	ClientOpts []kgo.Opt
	// MaxWaitMs, MinBytes, MaxBytes and PartitionMaxBytes are the fetch's
	// MaxWaitMillis, MinBytes, MaxBytes and per-partition
	// PartitionMaxBytes; zero takes the follower defaults
	// (replica.fetch.wait.max.ms, .min.bytes, .response.max.bytes and
	// .max.bytes).
	MaxWaitMs, MinBytes, MaxBytes, PartitionMaxBytes int32
	// MetadataMinInterval, MetadataMaxAge and MetadataTimeout: see the
	// Default* constants; zero takes the default.
	MetadataMinInterval, MetadataMaxAge, MetadataTimeout time.Duration
	Clock                                                clock.Clock
	Logger                                               *slog.Logger
	// OnPartitionError hears every partition error the endpoint sees or
	// synthesizes (a *PartitionError; IsFatal says whether the driver must
	// fail the partition). It runs on a fetcher goroutine and must not
	// block or call back into the fetcher manager: hand it off.
	OnPartitionError func(tp storage.TopicPartition, err error)
	// LocalClusterID is the id of the cluster the mirror copies into. A
	// source that answers Metadata with the same cluster id is that
	// cluster itself: every request fails with ErrSelfMirror instead of
	// being routed there, since mirroring a cluster into itself would
	// truncate each partition and then copy it from its own empty log.
	// Empty: not checked.
	LocalClusterID string
	// OnOffsetsSkipped hears that the core was told to restart a partition
	// at the source's log start, skipping [from, to): data deleted on the
	// source before it was mirrored. Same rules as OnPartitionError.
	OnOffsetsSkipped func(tp storage.TopicPartition, from, to int64)
	// SkipDeletedOffsets lets the core restart a partition at the source's
	// log start when the source deleted records before they were mirrored
	// (counted, logged, OnOffsetsSkipped). False (the default, issue 27)
	// fails the partition instead: FetchEarliestOffset reports a
	// RecordsDeletedError and returns it, so nothing is skipped silently.
	SkipDeletedOffsets bool
}

func (c *Config) withDefaults() (Config, error) {
	out := *c
	if len(out.BootstrapServers) == 0 {
		return out, errors.New("mirror source: bootstrap.servers is empty")
	}
	if out.MirrorName == "" {
		return out, errors.New("mirror source: the mirror has no name")
	}
	if out.MaxWaitMs <= 0 {
		out.MaxWaitMs = fetcher.DefaultFetchWaitMaxMs
	}
	if out.MinBytes <= 0 {
		out.MinBytes = fetcher.DefaultFetchMinBytes
	}
	if out.MaxBytes <= 0 {
		out.MaxBytes = fetcher.DefaultFetchResponseMaxBytes
	}
	if out.PartitionMaxBytes <= 0 {
		out.PartitionMaxBytes = fetcher.DefaultFetchMaxBytes
	}
	if out.MetadataMinInterval <= 0 {
		out.MetadataMinInterval = DefaultMetadataMinInterval
	}
	if out.MetadataMaxAge <= 0 {
		out.MetadataMaxAge = DefaultMetadataMaxAge
	}
	if out.MetadataTimeout <= 0 {
		out.MetadataTimeout = DefaultMetadataTimeout
	}
	if out.Clock == nil {
		out.Clock = clock.Real{}
	}
	if out.Logger == nil {
		out.Logger = slog.New(slog.DiscardHandler)
	}
	return out, nil
}

// ClientID is the source client id of a mirror.
func ClientID(mirror string) string { return "strait-mirror-" + mirror }
