package mirrorstate

import "errors"

// The refusals of Validate*: they carry the names of KIP-1279's error
// codes (digest §2.3), which the controller answers with
// (raftmeta/mirrormsg).
var (
	ErrMirrorTopicAlreadyPaused   = errors.New("MIRROR_TOPIC_ALREADY_PAUSED: the mirror topic is already paused")
	ErrMirrorTopicNotPaused       = errors.New("MIRROR_TOPIC_NOT_PAUSED: the mirror topic is not paused")
	ErrMirrorTopicBeingStopped    = errors.New("MIRROR_TOPIC_BEING_STOPPED: the mirror topic is being stopped")
	ErrMirrorTopicNotStopped      = errors.New("MIRROR_TOPIC_NOT_STOPPED: the mirror topic is not stopped")
	ErrInvalidClusterMirrorStates = errors.New("INVALID_CLUSTER_MIRROR_STATES: cluster mirror partition states are not in the expected states")
)
