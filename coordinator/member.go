package coordinator

import (
	"bytes"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// member is one member of a classic group (ClassicGroupMember). The join
// and sync "futures" are buffered channels: a parked JoinGroup or SyncGroup
// request waits on its channel, and completing the future is one
// non-blocking send.
type member struct {
	id                 string
	instanceID         *string // group.instance.id of a static member (KIP-345)
	clientID           string
	clientHost         string
	rebalanceTimeoutMs int32
	sessionTimeoutMs   int32
	protocolType       string
	protocols          []kmsg.JoinGroupRequestProtocol // in the member's preference order
	assignment         []byte

	joinCh chan *kmsg.JoinGroupResponse // non-nil while a JoinGroup awaits the join phase
	syncCh chan *kmsg.SyncGroupResponse // non-nil while a SyncGroup awaits the assignment
	// isNew marks a member added by this rebalance: it has no member id
	// to heartbeat with yet, so its heartbeat is never "satisfied" by a
	// parked join (ClassicGroupMember.isNew).
	isNew bool
}

func (m *member) isStatic() bool       { return m.instanceID != nil }
func (m *member) isAwaitingJoin() bool { return m.joinCh != nil }
func (m *member) isAwaitingSync() bool { return m.syncCh != nil }

// metadata is the member's protocol metadata for the named protocol (nil
// if it does not support it; Kafka throws, which the callers rule out).
func (m *member) metadata(protocol string) []byte {
	for _, p := range m.protocols {
		if p.Name == protocol {
			return p.Metadata
		}
	}
	return nil
}

// hasSatisfiedHeartbeat reports whether an expiring heartbeat deadline may
// be ignored: members parked in a rebalance need not heartbeat, except new
// members, which are expired even while awaiting the join.
func (m *member) hasSatisfiedHeartbeat() bool {
	if m.isNew {
		return false
	}
	return m.isAwaitingJoin() || m.isAwaitingSync()
}

// matches reports whether protocols are exactly the member's (names and
// metadata, in order): a rejoin with the same protocols does not change
// the group's metadata.
func (m *member) matches(protocols []kmsg.JoinGroupRequestProtocol) bool {
	if len(protocols) != len(m.protocols) {
		return false
	}
	for i := range protocols {
		if protocols[i].Name != m.protocols[i].Name || !bytes.Equal(protocols[i].Metadata, m.protocols[i].Metadata) {
			return false
		}
	}
	return true
}

// vote returns the member's most preferred protocol among candidates.
func (m *member) vote(candidates map[string]bool) string {
	for _, p := range m.protocols {
		if candidates[p.Name] {
			return p.Name
		}
	}
	return ""
}

// describe is the member as DescribeGroups shows it; protocol "" leaves
// out the metadata (groups not Stable, ClassicGroupMember.describeNoMetadata).
func (m *member) describe(protocol string) kmsg.DescribeGroupsResponseGroupMember {
	d := kmsg.NewDescribeGroupsResponseGroupMember()
	d.MemberID = m.id
	d.InstanceID = m.instanceID
	d.ClientID = m.clientID
	d.ClientHost = m.clientHost
	d.MemberAssignment = m.assignment
	if d.MemberAssignment == nil {
		d.MemberAssignment = []byte{}
	}
	d.ProtocolMetadata = []byte{}
	if protocol != "" {
		d.ProtocolMetadata = m.metadata(protocol)
	}
	return d
}

// copyProtocols keeps the request's protocols: kmsg may decode into
// buffers the caller reuses.
func copyProtocols(ps []kmsg.JoinGroupRequestProtocol) []kmsg.JoinGroupRequestProtocol {
	out := make([]kmsg.JoinGroupRequestProtocol, len(ps))
	for i, p := range ps {
		out[i] = kmsg.JoinGroupRequestProtocol{Name: p.Name, Metadata: append([]byte(nil), p.Metadata...)}
	}
	return out
}
