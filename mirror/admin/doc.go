// Package admin is the Go admin client of KIP-1279 (Cluster Mirroring): it
// creates, deletes, lists and describes mirrors and starts, stops, pauses
// and resumes the mirroring of topics, by sending the mirror RPCs of
// raftmeta/mirrormsg to the destination cluster. It plays the part of the
// KIP's Admin methods (createClusterMirror, startMirrorTopics, ...; digest
// §8.2) and is what `strait mirror` (package cli) runs.
//
// # Errors
//
// A request-level failure is returned as an error: a Kafka error code in
// the response becomes an *Error (the error name, e.g.
// UNKNOWN_CLUSTER_MIRROR, and the broker's message), wrapped with the
// operation, so errors.Is(err, mirrormsg.UnknownClusterMirror) and
// errors.As(err, &*Error) both work; anything else (dial, timeout, a
// broker without the mirror RPCs) is kgo's error, wrapped. Per-topic
// results (Start/Stop/Pause/Resume) and per-mirror results (Describe)
// carry their own Err, a *kerr.Error from mirrormsg.ErrorForCode or nil.
//
// Error codes are always named with mirrormsg.ErrorForCode, never kerr's:
// the mirror codes 134-146 are provisional, and kerr knows 134-136 as other
// errors (see raftmeta/mirrormsg/errors.go).
//
// # Topics and patterns
//
// StartMirrorTopicsRequest carries regular expressions (IncludePatterns,
// added to the mirror's topics.include), not names. StartMirrorTopics takes
// topic names and sends each as the anchored literal pattern
// "^" + regexp.QuoteMeta(name) + "$", which matches that topic and no
// other under both Go's RE2 and Java's java.util.regex (the broker side of
// the KIP is Java). Stop, Pause and Resume carry topic names and send them
// as they are.
//
// # Versions
//
// kgo sends only the keys its max-versions table lists and its default
// table (kversion.Stable) lacks the mirror keys (9400-9414):
// NewClient builds the client with kgo.MaxVersions(mirrormsg.MaxVersions(nil)),
// and a *kgo.Client given to Wrap must have been built the same way.
package admin
