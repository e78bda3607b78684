package source

import (
	"errors"
	"fmt"
	"strings"

	"github.com/strait-io/strait/storage"
)

// Sentinel errors a partition's reports wrap; see the package doc for what
// the driver does with each.
var (
	// ErrSourceTopicRecreated: the source topic now has another topic id
	// than the mirror topic (it was deleted and created again).
	ErrSourceTopicRecreated = errors.New("source topic recreated")
	// ErrSourceTopicNotFound: the source has no topic of that name.
	ErrSourceTopicNotFound = errors.New("source topic not found")
	// ErrSourcePartitionNotFound: the source topic has no such partition.
	ErrSourcePartitionNotFound = errors.New("source partition not found")
	// ErrSourceUnsupported: the source broker does not speak a version the
	// mirror needs (Fetch v12+, for LastFetchedEpoch and DivergingEpoch).
	ErrSourceUnsupported = errors.New("source broker too old to mirror from")
	// ErrSelfMirror: the source answers with the destination's own
	// cluster id (Config.LocalClusterID): its bootstrap servers reach this
	// cluster.
	ErrSelfMirror = errors.New("the source cluster is this cluster")
	// ErrSourceRecordsDeleted: the source deleted records (retention,
	// DeleteRecords) before they were mirrored: its log start passed the
	// mirror partition's log end, so mirroring on would leave a gap
	// (issue 27's loud failure; Config.SkipDeletedOffsets skips instead).
	ErrSourceRecordsDeleted = errors.New("source deleted records before they were mirrored")
)

// RecordsDeletedError says which offsets the source no longer has; it is
// an ErrSourceRecordsDeleted.
type RecordsDeletedError struct {
	TP storage.TopicPartition
	// DestinationEnd is the mirror partition's log end (the fetch
	// offset), SourceStart the source's log start now.
	DestinationEnd, SourceStart int64
}

func (e *RecordsDeletedError) Error() string {
	return fmt.Sprintf("%v: the source log of %s starts at offset %d, past the destination's log end %d; offsets %d to %d are lost "+
		"(stop the topic to fail over with the gap, or set mirror config mirror.offsets.skip.enable=true to mirror on from %d)",
		ErrSourceRecordsDeleted, e.TP, e.SourceStart, e.DestinationEnd, e.DestinationEnd, e.SourceStart-1, e.SourceStart)
}

// Unwrap makes errors.Is(err, ErrSourceRecordsDeleted) hold.
func (e *RecordsDeletedError) Unwrap() error { return ErrSourceRecordsDeleted }

// SelfMirrorError says which mirror reaches its own cluster, and how; it is
// an ErrSelfMirror.
type SelfMirrorError struct {
	Mirror, ClusterID string
	BootstrapServers  []string
}

func (e *SelfMirrorError) Error() string {
	return fmt.Sprintf("%v: the bootstrap servers of mirror %s (%s) answer with cluster id %s, which is this cluster's; a cluster cannot mirror itself",
		ErrSelfMirror, e.Mirror, strings.Join(e.BootstrapServers, ","), e.ClusterID)
}

// Unwrap makes errors.Is(err, ErrSelfMirror) hold.
func (e *SelfMirrorError) Unwrap() error { return ErrSelfMirror }

// TopicIDMismatchError says which ids disagree; it is an
// ErrSourceTopicRecreated.
type TopicIDMismatchError struct {
	Topic string
	// Mirror is the mirror topic's id (the source topic's id when mirroring
	// started), Source the id the source has now.
	Mirror, Source storage.TopicID
}

func (e *TopicIDMismatchError) Error() string {
	return fmt.Sprintf("%v: topic %s has id %s on the source, the mirror topic has %s",
		ErrSourceTopicRecreated, e.Topic, e.Source, e.Mirror)
}

// Unwrap makes errors.Is(err, ErrSourceTopicRecreated) hold.
func (e *TopicIDMismatchError) Unwrap() error { return ErrSourceTopicRecreated }

// PartitionError is a partition's error as the endpoint reports it: what the
// source (or the route to it) answered, and the request it answered.
type PartitionError struct {
	TP storage.TopicPartition
	// Op is the request: "fetch", "list offsets", "offset for leader epoch"
	// or "route" (no request was sent: the metadata had no usable leader).
	Op string
	// Broker is the source broker asked, -1 when none was.
	Broker int32
	Err    error
}

func (e *PartitionError) Error() string {
	if e.Broker < 0 {
		return fmt.Sprintf("mirror source %s %s: %v", e.Op, e.TP, e.Err)
	}
	return fmt.Sprintf("mirror source %s %s at broker %d: %v", e.Op, e.TP, e.Broker, e.Err)
}

func (e *PartitionError) Unwrap() error { return e.Err }

// IsFatal reports whether err means the partition cannot go on mirroring
// until something changes on the source or in the mirror's configuration:
// the errors the driver moves to FAILED rather than leaving to the core's
// retries. A source that is this cluster is one: FAILED is retried, so the
// partition recovers once the mirror's bootstrap.servers are mended.
func IsFatal(err error) bool {
	return errors.Is(err, ErrSourceTopicRecreated) || errors.Is(err, ErrSourceTopicNotFound) ||
		errors.Is(err, ErrSourcePartitionNotFound) || errors.Is(err, ErrSourceUnsupported) ||
		errors.Is(err, ErrSelfMirror) || errors.Is(err, ErrSourceRecordsDeleted)
}
