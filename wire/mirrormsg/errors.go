// Package mirrormsg is what is left here of the KIP-1279 message package,
// which moved to raftmeta/mirrormsg: the controller serves those messages,
// and raftmeta may not import the wire layer (DESIGN.md §2). It keeps the
// one name replication/mirror_access_test.go still uses; delete it once
// that test imports raftmeta/mirrormsg.
package mirrormsg

import kip "github.com/strait-io/strait/raftmeta/mirrormsg"

// ReadOnlyTopic is READ_ONLY_TOPIC (raftmeta/mirrormsg).
var ReadOnlyTopic = kip.ReadOnlyTopic
