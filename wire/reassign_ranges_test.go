package wire

// reassignRanges are partition reassignment (KIP-455) and broker
// unregistration, served only by a server with a ReassignmentService:
// Kafka 4.1's ranges (AlterPartitionReassignments v1 is KIP-860's).
var reassignRanges = map[int16][2]int16{
	45: {0, 1}, 46: {0, 0}, 64: {0, 0},
}

// reassignStandIn is a ReassignmentService for the served checks.
type reassignStandIn struct{ ReassignmentService }
