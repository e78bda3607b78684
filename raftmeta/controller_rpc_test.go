package raftmeta

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/ctrlrpc"
)

// TestControllerRequestsNotController: every request the controller
// channel carries answers NOT_CONTROLLER somewhere in its response on a
// node that is not the active controller, which is what makes
// ctrlrpc.Client move on; other requests are refused.
func TestControllerRequestsNotController(t *testing.T) {
	c, log := newTestController(t, Config{}, 1)
	mustCreate(t, c, newTopic("t", 1, 1))
	log.mu.Lock()
	log.leader = false
	log.mu.Unlock()

	reg := kmsg.NewPtrBrokerRegistrationRequest()
	reg.BrokerID, reg.IncarnationID = 2, [16]byte{1}
	hb := kmsg.NewPtrBrokerHeartbeatRequest()
	hb.BrokerID, hb.BrokerEpoch = 1, log.Image().Brokers[1].Epoch
	ap := kmsg.NewPtrAlterPartitionRequest()
	ap.BrokerID, ap.BrokerEpoch = 1, log.Image().Brokers[1].Epoch
	pid := kmsg.NewPtrAllocateProducerIDsRequest()
	pid.BrokerID, pid.BrokerEpoch = 1, log.Image().Brokers[1].Epoch
	dt := kmsg.NewPtrDeleteTopicsRequest()
	dt.TopicNames = []string{"t"}
	cp := kmsg.NewPtrCreatePartitionsRequest()
	cp.Topics = []kmsg.CreatePartitionsRequestTopic{{Topic: "t", Count: 2}}
	ac := kmsg.NewPtrAlterConfigsRequest()
	ac.Resources = []kmsg.AlterConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "t"}}
	inc := incReq(false, incRes(topicT, "t", op{"retention.ms", set, s("1")}))
	ca := kmsg.NewPtrCreateACLsRequest()
	ca.Creations = []kmsg.CreateACLsRequestCreation{aclCreation(topicR, "t", literal, "User:a", read, allow)}
	da := kmsg.NewPtrDeleteACLsRequest()
	da.Filters = []kmsg.DeleteACLsRequestFilter{{ResourceType: kmsg.ACLResourceTypeAny, ResourcePatternType: kmsg.ACLResourcePatternTypeAny, Operation: kmsg.ACLOperationAny, PermissionType: kmsg.ACLPermissionTypeAny}}
	el := kmsg.NewPtrElectLeadersRequest()
	el.Topics = []kmsg.ElectLeadersRequestTopic{{Topic: "t", Partitions: []int32{0}}}
	el0 := kmsg.NewPtrElectLeadersRequest()
	el0.Version = 0
	el0.Topics = el.Topics
	el.Version = 2

	for _, req := range []kmsg.Request{
		reg, hb, ap, pid, createReq(7, newTopic("u", 1, 1)), dt, cp, ac, inc, ca, da, el, el0,
	} {
		resp, err := c.ServeControllerRequest(context.Background(), req)
		if err != nil {
			t.Fatalf("%s: %v", kmsg.NameForKey(req.Key()), err)
		}
		if resp.Key() != req.Key() || resp.GetVersion() != req.GetVersion() {
			t.Fatalf("%s v%d answered by %s v%d", kmsg.NameForKey(req.Key()), req.GetVersion(), kmsg.NameForKey(resp.Key()), resp.GetVersion())
		}
		if !ctrlrpc.HasErrorCode(resp, kerr.NotController.Code) {
			t.Errorf("%s v%d on a follower: no NOT_CONTROLLER in %+v", kmsg.NameForKey(req.Key()), req.GetVersion(), resp)
		}
	}
	if _, err := c.ServeControllerRequest(context.Background(), kmsg.NewPtrMetadataRequest()); err == nil {
		t.Fatal("Metadata served by the controller channel")
	}
}
