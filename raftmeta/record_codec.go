package raftmeta

// Field layouts of each record at version 0, in the order of Kafka's JSON
// schemas (fields Strait does not use are left out).

func (r *RegisterBrokerRecord) appendTo(b []byte) []byte {
	b = appendInt(b, int64(r.BrokerID))
	b = appendUuid(b, r.IncarnationID)
	b = appendInt(b, r.BrokerEpoch)
	b = appendInt(b, int64(len(r.EndPoints)))
	for _, e := range r.EndPoints {
		b = appendString(b, e.Listener)
		b = appendString(b, e.Host)
		b = appendInt(b, int64(e.Port))
		b = appendString(b, e.SecurityProtocol)
	}
	b = appendString(b, r.Rack)
	b = appendBool(b, r.Fenced)
	b = appendInt(b, int64(len(r.LogDirs)))
	for _, d := range r.LogDirs {
		b = appendUuid(b, d)
	}
	return b
}

func (r *FenceBrokerRecord) appendTo(b []byte) []byte {
	return appendInt(appendInt(b, int64(r.ID)), r.Epoch)
}

func (r *UnfenceBrokerRecord) appendTo(b []byte) []byte {
	return appendInt(appendInt(b, int64(r.ID)), r.Epoch)
}

func (r *BrokerRegistrationChangeRecord) appendTo(b []byte) []byte {
	b = appendInt(b, int64(r.BrokerID))
	b = appendInt(b, r.BrokerEpoch)
	b = appendInt(b, int64(r.Fenced))
	return appendInt(b, int64(r.InControlledShutdown))
}

func (r *TopicRecord) appendTo(b []byte) []byte {
	return appendUuid(appendString(b, r.Name), r.TopicID)
}

func (r *PartitionRecord) appendTo(b []byte) []byte {
	b = appendInt(b, int64(r.PartitionID))
	b = appendUuid(b, r.TopicID)
	b = appendInt32s(b, r.Replicas)
	b = appendInt32s(b, r.ISR)
	b = appendInt(b, int64(r.Leader))
	b = appendInt(b, int64(r.LeaderEpoch))
	b = appendInt(b, int64(r.PartitionEpoch))
	return appendReassigning(b, r.Version(), r.AddingReplicas, r.RemovingReplicas)
}

func (r *PartitionChangeRecord) appendTo(b []byte) []byte {
	b = appendInt(b, int64(r.PartitionID))
	b = appendUuid(b, r.TopicID)
	b = appendInt32s(b, r.ISR)
	b = appendInt(b, int64(r.Leader))
	b = appendInt32s(b, r.Replicas)
	b = appendInt(b, int64(r.MinLeaderEpoch))
	return appendReassigning(b, r.Version(), r.AddingReplicas, r.RemovingReplicas)
}

func (r *RemoveTopicRecord) appendTo(b []byte) []byte { return appendUuid(b, r.TopicID) }

func (r *ConfigRecord) appendTo(b []byte) []byte {
	b = appendInt(b, int64(r.ResourceType))
	b = appendString(b, r.ResourceName)
	b = appendString(b, r.Name)
	return appendNullableString(b, r.Value)
}

func (r *ProducerIdsRecord) appendTo(b []byte) []byte {
	b = appendInt(b, int64(r.BrokerID))
	b = appendInt(b, r.BrokerEpoch)
	return appendInt(b, r.NextProducerID)
}

func (r *AccessControlEntryRecord) appendTo(b []byte) []byte {
	a := &r.ACL
	b = appendUuid(b, a.ID)
	b = appendInt(b, int64(a.ResourceType))
	b = appendString(b, a.ResourceName)
	b = appendInt(b, int64(a.PatternType))
	b = appendString(b, a.Principal)
	b = appendString(b, a.Host)
	b = appendInt(b, int64(a.Operation))
	return appendInt(b, int64(a.PermissionType))
}

func (r *RemoveAccessControlEntryRecord) appendTo(b []byte) []byte { return appendUuid(b, r.ID) }

// decodeFields reads the fields of a record of type t at version v (a
// known type; the version was checked by the caller).
func decodeFields(t RecordType, v int8, d *decoder) Record {
	switch t {
	case RegisterBrokerRecordType:
		r := &RegisterBrokerRecord{BrokerID: d.int32(), IncarnationID: d.uuid(), BrokerEpoch: d.int64()}
		n := d.varint()
		// An endpoint takes at least four bytes.
		if n < 0 || n > int64(len(d.b))/4 {
			d.fail("endpoint count %d", n)
			return nil
		}
		if n > 0 {
			r.EndPoints = make([]Endpoint, n)
		}
		for i := range r.EndPoints {
			r.EndPoints[i] = Endpoint{Listener: d.string(), Host: d.string(), Port: d.int32(), SecurityProtocol: d.string()}
		}
		r.Rack = d.string()
		r.Fenced = d.bool()
		if v >= 1 {
			n := d.varint()
			if n < 0 || n > int64(len(d.b))/16 {
				d.fail("log dir count %d", n)
				return nil
			}
			if n > 0 {
				r.LogDirs = make([]Uuid, n)
			}
			for i := range r.LogDirs {
				r.LogDirs[i] = d.uuid()
			}
		}
		return r
	case FenceBrokerRecordType:
		return &FenceBrokerRecord{ID: d.int32(), Epoch: d.int64()}
	case UnfenceBrokerRecordType:
		return &UnfenceBrokerRecord{ID: d.int32(), Epoch: d.int64()}
	case BrokerRegistrationChangeRecordType:
		return &BrokerRegistrationChangeRecord{BrokerID: d.int32(), BrokerEpoch: d.int64(), Fenced: d.int8(), InControlledShutdown: d.int8()}
	case TopicRecordType:
		return &TopicRecord{Name: d.string(), TopicID: d.uuid()}
	case PartitionRecordType:
		r := &PartitionRecord{
			PartitionID:    d.int32(),
			TopicID:        d.uuid(),
			Replicas:       d.int32s(),
			ISR:            d.int32s(),
			Leader:         d.int32(),
			LeaderEpoch:    d.int32(),
			PartitionEpoch: d.int32(),
		}
		r.AddingReplicas, r.RemovingReplicas = decodeReassigning(d, v)
		return r
	case PartitionChangeRecordType:
		r := &PartitionChangeRecord{
			PartitionID:    d.int32(),
			TopicID:        d.uuid(),
			ISR:            d.int32s(),
			Leader:         d.int32(),
			Replicas:       d.int32s(),
			MinLeaderEpoch: d.int32(),
		}
		r.AddingReplicas, r.RemovingReplicas = decodeReassigning(d, v)
		return r
	case RemoveTopicRecordType:
		return &RemoveTopicRecord{TopicID: d.uuid()}
	case ConfigRecordType:
		return &ConfigRecord{
			ResourceType: ConfigResourceType(d.int8()),
			ResourceName: d.string(),
			Name:         d.string(),
			Value:        d.nullableString(),
		}
	case ProducerIdsRecordType:
		return &ProducerIdsRecord{BrokerID: d.int32(), BrokerEpoch: d.int64(), NextProducerID: d.int64()}
	case AccessControlEntryRecordType:
		return &AccessControlEntryRecord{ACL: ACLBinding{
			ID:             d.uuid(),
			ResourceType:   d.int8(),
			ResourceName:   d.string(),
			PatternType:    d.int8(),
			Principal:      d.string(),
			Host:           d.string(),
			Operation:      d.int8(),
			PermissionType: d.int8(),
		}}
	case RemoveAccessControlEntryRecordType:
		return &RemoveAccessControlEntryRecord{ID: d.uuid()}
	case UserScramCredentialRecordType, RemoveUserScramCredentialRecordType:
		return decodeScramFields(t, d)
	case ClientQuotaRecordType:
		return decodeClientQuotaRecord(d)
	case MirrorRecordType, RemoveMirrorRecordType:
		return decodeMirrorFields(t, d)
	case ForwardedRequestRecordType:
		return decodeForwardedRequest(d)
	case FeatureLevelRecordType:
		return decodeFeatureLevel(d)
	case UnregisterBrokerRecordType:
		return &UnregisterBrokerRecord{BrokerID: d.int32(), BrokerEpoch: d.int64()}
	}
	d.fail("unknown record type %d", uint8(t))
	return nil
}
