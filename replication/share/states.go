package share

import "fmt"

// RecordState is an in-flight record's state, numbered as Kafka persists
// it (SharePartition.RecordState; StateBatch.DeliveryState).
type RecordState int8

const (
	// Available records may be acquired: never delivered, released by
	// their holder, or whose acquisition lock expired.
	Available RecordState = 0
	// Acquired records are locked to one member until it acknowledges
	// them or the lock expires.
	Acquired RecordState = 1
	// Acknowledged records were accepted: processed, never redelivered.
	Acknowledged RecordState = 2
	// Archived records were rejected, are gaps, were delivered the
	// maximum number of times, or fell below the log start offset.
	Archived RecordState = 4
)

func (s RecordState) String() string {
	switch s {
	case Available:
		return "AVAILABLE"
	case Acquired:
		return "ACQUIRED"
	case Acknowledged:
		return "ACKNOWLEDGED"
	case Archived:
		return "ARCHIVED"
	}
	return fmt.Sprintf("RecordState(%d)", int8(s))
}

// terminal reports whether a record in s is done with: the SPSO may move
// past it.
func (s RecordState) terminal() bool { return s == Acknowledged || s == Archived }

// AckType is an acknowledgement type (KIP-932 AcknowledgeType, KIP-1222
// RENEW): the AcknowledgeTypes of an acknowledgement batch.
type AckType int8

const (
	// AckGap marks an offset holding no record (compacted away, a
	// control record): archived.
	AckGap AckType = 0
	// AckAccept: processed; the record is acknowledged.
	AckAccept AckType = 1
	// AckRelease: give the record back for redelivery (archived instead
	// once it was delivered group.share.delivery.count.limit times).
	AckRelease AckType = 2
	// AckReject: unprocessable; the record is archived.
	AckReject AckType = 3
	// AckRenew restarts the record's acquisition lock (KIP-1222,
	// ShareFetch and ShareAcknowledge v2 with IsRenewAck).
	AckRenew AckType = 4
)

// AcquireMode is ShareFetch v2's ShareAcquireMode (KIP-1206).
type AcquireMode int8

const (
	// BatchOptimized acquires whole log batches: MaxRecords is a soft
	// limit, exceeded to the end of the batch holding the last record.
	BatchOptimized AcquireMode = 0
	// RecordLimit acquires at most MaxRecords records, splitting a batch.
	RecordLimit AcquireMode = 1
)
