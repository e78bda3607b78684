package raftmeta

// The records of partition reassignment (KIP-455) and broker
// unregistration.
//
// PartitionRecord and PartitionChangeRecord carry a reassignment's adding
// and removing replicas from version 1 on, as Kafka's records do (their
// AddingReplicas / RemovingReplicas fields). A record that carries none is
// still written at version 0, byte for byte as before, so logs and
// snapshots written before reassignment existed read the same, and a
// cluster that never reassigns writes nothing a previous Strait could not
// read.

// UnregisterBrokerRecord removes a broker's registration (Kafka's record
// of the same name, apiKey 1): UnregisterBroker (64) writes it.
type UnregisterBrokerRecord struct {
	BrokerID    int32
	BrokerEpoch int64
}

func (*UnregisterBrokerRecord) Type() RecordType { return UnregisterBrokerRecordType }
func (*UnregisterBrokerRecord) Version() int8    { return 0 }

func (r *UnregisterBrokerRecord) appendTo(b []byte) []byte {
	return appendInt(appendInt(b, int64(r.BrokerID)), r.BrokerEpoch)
}

// Version is 1 when a reassignment is under way, else 0.
func (r *PartitionRecord) Version() int8 {
	if len(r.AddingReplicas) > 0 || len(r.RemovingReplicas) > 0 {
		return 1
	}
	return 0
}

// Version is 1 when the record changes the adding or removing replicas
// (including clearing them), else 0.
func (r *PartitionChangeRecord) Version() int8 {
	if r.AddingReplicas != nil || r.RemovingReplicas != nil {
		return 1
	}
	return 0
}

// appendReassigning appends the version 1 fields of a partition record.
func appendReassigning(b []byte, version int8, adding, removing []int32) []byte {
	if version < 1 {
		return b
	}
	return appendInt32s(appendInt32s(b, adding), removing)
}

// decodeReassigning reads what appendReassigning wrote at version v.
func decodeReassigning(d *decoder, v int8) (adding, removing []int32) {
	if v < 1 {
		return nil, nil
	}
	return d.int32s(), d.int32s()
}
