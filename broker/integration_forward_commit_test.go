package broker_test

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// TestACLForwardOnlyOffsetCommit (issue 27): the forward-only commit a
// mirror's group offset sync sends (it bypasses the group's member checks)
// needs CLUSTER_ACTION on the cluster besides OffsetCommit's READ on the
// group and topic; without it every partition is
// CLUSTER_AUTHORIZATION_FAILED and nothing is written.
func TestACLForwardOnlyOffsetCommit(t *testing.T) {
	sc := startSecured(t, 1)
	createTopic(t, sc.adm, "t", 1)
	lit, allow := kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLPermissionTypeAllow
	sc.createACLs(t, []kmsg.CreateACLsRequestCreation{
		aclOf(kmsg.ACLResourceTypeGroup, "g", lit, pAlice, kmsg.ACLOperationRead, allow),
		aclOf(kmsg.ACLResourceTypeTopic, "t", lit, pAlice, kmsg.ACLOperationRead, allow),
	})
	commit := func(at int64, forward bool) (int16, *kmsg.OffsetCommitResponseTopicPartition) {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Group, req.Generation = "g", -1
		if forward {
			mirrormsg.SetForwardOnly(req)
		}
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = "t"
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset = 0, at
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp := sendOnce(t, sc.clients[pAlice], req).(*kmsg.OffsetCommitResponse)
		p := &resp.Topics[0].Partitions[0]
		return p.ErrorCode, p
	}
	// FindCoordinator creates the offsets topic; the first commits wait
	// for it to load.
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKeys = []string{"g"}
	send(t, sc.clients[pAdmin], fc, func(r *kmsg.FindCoordinatorResponse) int16 { return r.Coordinators[0].ErrorCode })
	code, _ := commit(5, false)
	for deadline := time.Now().Add(30 * time.Second); (code == kerr.NotCoordinator.Code || code == kerr.CoordinatorLoadInProgress.Code || code == kerr.CoordinatorNotAvailable.Code) && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		code, _ = commit(5, false)
	}
	if code != 0 {
		t.Fatalf("plain commit with READ: %v", kerr.ErrorForCode(code))
	}
	if code, _ := commit(9, true); code != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("forward-only commit without CLUSTER_ACTION: %v, want CLUSTER_AUTHORIZATION_FAILED", kerr.ErrorForCode(code))
	}
	sc.createACLs(t, []kmsg.CreateACLsRequestCreation{
		aclOf(kmsg.ACLResourceTypeCluster, "kafka-cluster", lit, pAlice, kmsg.ACLOperationClusterAction, allow),
	})
	if code, p := commit(3, true); code != 0 {
		t.Fatalf("forward-only commit below the committed 5 with CLUSTER_ACTION: %v", kerr.ErrorForCode(code))
	} else if kept, ok := mirrormsg.Kept(p); !ok || kept != 5 {
		t.Fatalf("forward-only commit of 3 over 5: kept %d (%v), want 5", kept, ok)
	}
	if code, p := commit(9, true); code != 0 {
		t.Fatalf("forward-only commit with CLUSTER_ACTION: %v", kerr.ErrorForCode(code))
	} else if _, ok := mirrormsg.Kept(p); ok {
		t.Fatal("forward-only commit of 9 over 5 was not written")
	}
	offs, err := sc.adm.FetchOffsets(testCtx(t, 10*time.Second), "g")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := offs.Lookup("t", 0); o.At != 9 {
		t.Fatalf("committed %d, want 9", o.At)
	}
}
