// Package mirrorstate is what the metadata layer and the mirror partition
// state machine (mirror/partition) share about a KIP-1279 mirror topic: the
// desired state the controller writes into the topic config mirror.name
// (Desired, ParseMirrorName, FormatMirrorName), the partition states
// persisted in __mirror_state (State), and the rules the admin RPCs check
// before the controller changes mirror.name (ValidateStart, ValidateStop,
// ValidatePause, ValidateResume).
//
// It is a leaf of raftmeta's with no dependency outside the standard
// library, so that the controller does not import mirror/ above it
// (DESIGN.md §2) and the machine stays pure (mirror/partition's
// TestLintPure checks this package's files too).
package mirrorstate
