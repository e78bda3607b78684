package raftmeta

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A static quorum (kraft.version 0, written by a FeatureLevelRecord) is
// not reconfigured: AddRaftVoter and RemoveRaftVoter answer
// UNSUPPORTED_VERSION, as Kafka's handlers do, after the request's own
// checks. At the bootstrap level 1 the request goes on to the quorum (a
// test log is none: NOT_CONTROLLER).
func TestVoterChangesNeedKRaftVersion1(t *testing.T) {
	c, log := newTestController(t, Config{})
	ctx := context.Background()
	add := func() int16 {
		req := kmsg.NewPtrAddRaftVoterRequest()
		req.VoterID, req.VoterDirectoryID = 2, [16]byte{1}
		req.Listeners = []kmsg.AddRaftVoterRequestListener{{Name: "CONTROLLER", Host: "h", Port: 1}}
		return c.AddRaftVoter(ctx, req).ErrorCode
	}
	remove := func() int16 {
		req := kmsg.NewPtrRemoveRaftVoterRequest()
		req.VoterID, req.VoterDirectoryID = 2, [16]byte{1}
		return c.RemoveRaftVoter(ctx, req).ErrorCode
	}
	if a, r := add(), remove(); a != kerr.NotController.Code || r != kerr.NotController.Code {
		t.Fatalf("kraft.version 1: add %s, remove %s", codeName(a), codeName(r))
	}
	if err := <-log.Propose([]Record{&FeatureLevelRecord{Name: FeatureKRaftVersion, FeatureLevel: 0}}); err != nil {
		t.Fatal(err)
	}
	if a, r := add(), remove(); a != kerr.UnsupportedVersion.Code || r != kerr.UnsupportedVersion.Code {
		t.Fatalf("kraft.version 0: add %s, remove %s", codeName(a), codeName(r))
	}
}
