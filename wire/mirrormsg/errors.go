package mirrormsg

import (
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/raftmeta/mirrorcodes"
)

// The KIP-1279 error codes (digest §2.3, DESIGN.md §4) are the metadata
// layer's: the controller answers with them, and it may not import this
// package. These names keep the protocol's table in one place for the wire
// layer and the mirror clients; see raftmeta/mirrorcodes for the codes and
// why none is retriable.
var (
	ReadOnlyTopic                    = mirrorcodes.ReadOnlyTopic
	ClusterMirrorAlreadyExists       = mirrorcodes.ClusterMirrorAlreadyExists
	UnknownClusterMirror             = mirrorcodes.UnknownClusterMirror
	TopicAlreadyInClusterMirror      = mirrorcodes.TopicAlreadyInClusterMirror
	TopicNotInClusterMirror          = mirrorcodes.TopicNotInClusterMirror
	MirrorTopicAlreadyPaused         = mirrorcodes.MirrorTopicAlreadyPaused
	MirrorTopicNotPaused             = mirrorcodes.MirrorTopicNotPaused
	MirrorTopicBeingStopped          = mirrorcodes.MirrorTopicBeingStopped
	ClusterMirrorNotEmpty            = mirrorcodes.ClusterMirrorNotEmpty
	ClusterMirrorAuthorizationFailed = mirrorcodes.ClusterMirrorAuthorizationFailed
	InvalidClusterMirrorStates       = mirrorcodes.InvalidClusterMirrorStates
	MirrorTopicNotStopped            = mirrorcodes.MirrorTopicNotStopped
)

// ErrorForCode returns the error of code: a mirror error for the KIP's
// codes, otherwise kerr.ErrorForCode (mirrorcodes.ErrorForCode).
func ErrorForCode(code int16) error { return mirrorcodes.ErrorForCode(code) }

// TypedErrorForCode is ErrorForCode as a *kerr.Error; nil for 0 (beware
// the typed nil when passing it on as an error).
func TypedErrorForCode(code int16) *kerr.Error { return mirrorcodes.TypedErrorForCode(code) }
