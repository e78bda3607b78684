package record

// AppendOrigin says who is appending, which decides what is validated and
// allowed (Kafka's AppendOrigin).
type AppendOrigin int8

const (
	// OriginClient is a producer's batch: fully validated, no control
	// batches, duplicates detected.
	OriginClient AppendOrigin = iota
	// OriginCoordinator is a batch the broker writes itself: transaction
	// markers, MIRROR_PID_RESET, coordinator records. Control batches are
	// allowed.
	OriginCoordinator
	// OriginReplication is a follower (or mirror) appending batches that
	// already carry their offsets and epochs.
	OriginReplication
)

func (o AppendOrigin) String() string {
	switch o {
	case OriginClient:
		return "client"
	case OriginCoordinator:
		return "coordinator"
	default:
		return "replication"
	}
}
