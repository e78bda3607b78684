package mirrormsg

import "github.com/twmb/franz-go/pkg/kerr"

// The KIP-1279 error codes, numbered as in the prototype's Errors.java
// (showuon/kafka; the digest §2.3) and DESIGN.md §4. Like the API keys they
// are provisional: upstream has since given some of the same numbers to
// other errors (kerr v1.22 knows 134 as GROUP_DELETION_FAILED, 135 as
// STREAMS_TOPOLOGY_DESCRIPTION_UPDATE_FAILED, 136 as
// CONTROLLER_ID_NOT_REGISTERED), so a client that does not use ErrorForCode
// names them wrongly. The messages are the prototype's. None is marked
// retriable: the digest does not say, and each reports a state that only an
// operator's request changes (pause, stop, create ...), which a client
// retrying the same request would not.
//
// Code 135 is unused in the prototype; ErrorForCode leaves it to kerr.
var (
	ReadOnlyTopic                    = &kerr.Error{Message: "READ_ONLY_TOPIC", Code: 134, Retriable: false, Description: "The topic is read-only."}
	ClusterMirrorAlreadyExists       = &kerr.Error{Message: "CLUSTER_MIRROR_ALREADY_EXISTS", Code: 136, Retriable: false, Description: "The cluster mirror already exists."}
	UnknownClusterMirror             = &kerr.Error{Message: "UNKNOWN_CLUSTER_MIRROR", Code: 137, Retriable: false, Description: "The cluster mirror does not exist."}
	TopicAlreadyInClusterMirror      = &kerr.Error{Message: "TOPIC_ALREADY_IN_CLUSTER_MIRROR", Code: 138, Retriable: false, Description: "The topic is already assigned to a cluster mirror."}
	TopicNotInClusterMirror          = &kerr.Error{Message: "TOPIC_NOT_IN_CLUSTER_MIRROR", Code: 139, Retriable: false, Description: "The topic does not belong to the specified cluster mirror."}
	MirrorTopicAlreadyPaused         = &kerr.Error{Message: "MIRROR_TOPIC_ALREADY_PAUSED", Code: 140, Retriable: false, Description: "The mirror topic is already paused."}
	MirrorTopicNotPaused             = &kerr.Error{Message: "MIRROR_TOPIC_NOT_PAUSED", Code: 141, Retriable: false, Description: "The mirror topic is not paused."}
	MirrorTopicBeingStopped          = &kerr.Error{Message: "MIRROR_TOPIC_BEING_STOPPED", Code: 142, Retriable: false, Description: "The mirror topic is being stopped."}
	ClusterMirrorNotEmpty            = &kerr.Error{Message: "CLUSTER_MIRROR_NOT_EMPTY", Code: 143, Retriable: false, Description: "The cluster mirror still has active or non-stopped topics."}
	ClusterMirrorAuthorizationFailed = &kerr.Error{Message: "CLUSTER_MIRROR_AUTHORIZATION_FAILED", Code: 144, Retriable: false, Description: "Cluster mirror authorization failed."}
	InvalidClusterMirrorStates       = &kerr.Error{Message: "INVALID_CLUSTER_MIRROR_STATES", Code: 145, Retriable: false, Description: "Cluster mirror partition states are not in the expected states."}
	MirrorTopicNotStopped            = &kerr.Error{Message: "MIRROR_TOPIC_NOT_STOPPED", Code: 146, Retriable: false, Description: "The mirror topic is not stopped."}
)

// ErrorForCode returns the error of code: a mirror error for the codes
// above, otherwise kerr.ErrorForCode (nil for 0, UNKNOWN_SERVER_ERROR for
// a code neither knows).
func ErrorForCode(code int16) error {
	if e := mirrorError(code); e != nil {
		return e
	}
	return kerr.ErrorForCode(code)
}

// TypedErrorForCode is ErrorForCode as a *kerr.Error; nil for 0 (beware
// the typed nil when passing it on as an error).
func TypedErrorForCode(code int16) *kerr.Error {
	if e := mirrorError(code); e != nil {
		return e
	}
	return kerr.TypedErrorForCode(code)
}

// mirrorError is a switch rather than a map so the package holds no
// lookup state beyond the error values themselves.
func mirrorError(code int16) *kerr.Error {
	switch code {
	case 134:
		return ReadOnlyTopic
	case 136:
		return ClusterMirrorAlreadyExists
	case 137:
		return UnknownClusterMirror
	case 138:
		return TopicAlreadyInClusterMirror
	case 139:
		return TopicNotInClusterMirror
	case 140:
		return MirrorTopicAlreadyPaused
	case 141:
		return MirrorTopicNotPaused
	case 142:
		return MirrorTopicBeingStopped
	case 143:
		return ClusterMirrorNotEmpty
	case 144:
		return ClusterMirrorAuthorizationFailed
	case 145:
		return InvalidClusterMirrorStates
	case 146:
		return MirrorTopicNotStopped
	}
	return nil
}
