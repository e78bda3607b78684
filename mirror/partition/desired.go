package partition

import "github.com/strait-io/strait/raftmeta/mirrorstate"

// Desired is the state metadata asks a mirror topic's partitions to reach
// (raftmeta/mirrorstate.Desired: the controller writes it into the topic
// config mirror.name, and the machine takes it in DesiredChanged).
type Desired = mirrorstate.Desired

// The desired states; see mirrorstate for what each means.
const (
	DesiredNone  = mirrorstate.DesiredNone
	DesiredStart = mirrorstate.DesiredStart
	DesiredStop  = mirrorstate.DesiredStop
	DesiredPause = mirrorstate.DesiredPause
)
