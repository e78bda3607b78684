package broker_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/strait-io/strait/broker/brokertest"
)

// featuresSeen is what kgo learns of a broker's features from ApiVersions
// (kversion, which kgo's own features checks read): the supported ranges
// and the finalized levels, in name order.
func featuresSeen(t *testing.T, cl *kgo.Client, node int32) (supported, finalized string) {
	t.Helper()
	vs, err := kadm.NewClient(cl).ApiVersions(testCtx(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	v, ok := vs[node]
	if !ok || v.Err != nil {
		t.Fatalf("ApiVersions of node %d: %v (%t)", node, v.Err, ok)
	}
	kv := kversion.FromApiVersionsResponse(v.Raw())
	kv.EachSupportedFeature(func(name string, lo, hi int16) { supported += fmt.Sprintf("%s=%d-%d ", name, lo, hi) })
	kv.EachFinalizedFeature(func(name string, level int16) { finalized += fmt.Sprintf("%s=%d ", name, level) })
	return supported, finalized
}

// updateFeature sends one UpdateFeatures (v2, kmsg) to node and returns the
// top-level error code and message.
func updateFeature(t *testing.T, cl *kgo.Client, node int32, name string, level int16, upgradeType int8, validateOnly bool) (int16, string) {
	t.Helper()
	req := kmsg.NewPtrUpdateFeaturesRequest()
	u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
	u.Feature, u.MaxVersionLevel, u.UpgradeType = name, level, upgradeType
	req.FeatureUpdates, req.ValidateOnly = append(req.FeatureUpdates, u), validateOnly
	kr, err := cl.Broker(int(node)).Request(testCtx(t, 20*time.Second), req)
	if err != nil {
		t.Fatalf("UpdateFeatures %s=%d: %v", name, level, err)
	}
	resp := kr.(*kmsg.UpdateFeaturesResponse)
	msg := ""
	if resp.ErrorMessage != nil {
		msg = *resp.ErrorMessage
	}
	return resp.ErrorCode, msg
}

// kafkaGoKeys is the set of API keys kafka-go's ApiVersions (v2: it reads
// no features) sees on addr, as "key:min-max" for the keys asked about.
func kafkaGoKeys(t *testing.T, addr string, keys ...int) string {
	t.Helper()
	conn, err := kafka.DialContext(testCtx(t, 10*time.Second), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	vs, err := conn.ApiVersions()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, k := range keys {
		s := fmt.Sprintf("%d:-", k)
		for _, v := range vs {
			if int(v.ApiKey) == k {
				s = fmt.Sprintf("%d:%d-%d", k, v.MinVersion, v.MaxVersion)
			}
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

// waitFeatureLevel waits until every node's image has the feature at level.
func waitFeatureLevel(t *testing.T, c *brokertest.Cluster, name string, level int16) {
	t.Helper()
	c.WaitFor(t, 10*time.Second, fmt.Sprintf("every node to finalize %s %d", name, level), func() bool {
		for _, n := range c.Nodes() {
			if n.Node().Image().FeatureLevel(name) != level {
				return false
			}
		}
		return true
	})
}

// TestUpdateFeatures: ApiVersions lists the feature ranges Strait supports
// and the finalized levels (KIP-584), as kgo's kversion and kadm read them.
// UpdateFeatures, sent to a broker that is not the active controller,
// refuses levels Strait cannot act on with INVALID_UPDATE_VERSION in
// FeatureControlManager's words, validates without writing, and downgrades
// group.version to 0 (SAFE_DOWNGRADE), which takes the KIP-848 APIs out of
// every broker's ApiVersions (kgo and kafka-go) and answers
// ConsumerGroupHeartbeat UNSUPPORTED_VERSION; the level survives a restart
// (it is in the metadata log), and kadm's UpdateFeatures brings it back.
func TestUpdateFeatures(t *testing.T) {
	c := brokertest.StartCluster(t, 3)
	var other int32
	for _, id := range c.Running() {
		if id != c.Controller() {
			other = id
			break
		}
	}
	cl := c.Node(other).Client(t)
	if _, err := kmsg.NewPtrMetadataRequest().RequestWith(testCtx(t, 10*time.Second), cl); err != nil {
		t.Fatal(err)
	}

	const wantSupported = "eligible.leader.replicas.version=0-0 group.version=0-1 kraft.version=0-1 metadata.version=25-25 share.version=1-1 transaction.version=0-2 "
	const bootstrapped = "group.version=1 kraft.version=1 metadata.version=25 share.version=1 transaction.version=2 "
	for _, id := range c.Running() {
		if s, f := featuresSeen(t, cl, id); s != wantSupported || f != bootstrapped {
			t.Fatalf("node %d: supported %q finalized %q,\nwant %q and %q", id, s, f, wantSupported, bootstrapped)
		}
	}

	const upgrade, safe, unsafe = 1, 2, 3
	invalid := kerr.InvalidUpdateVersion.Code
	prefix := "The update failed for all features since the following feature had an error: "
	for _, tc := range []struct {
		name        string
		level       int16
		upgradeType int8
		why         string
	}{
		{"transaction.version", 3, upgrade, "Invalid update version 3 for feature transaction.version. Local controller %d only supports versions 0-2"},
		{"metadata.version", 24, safe, "Invalid update version 24 for feature metadata.version. Local controller %d only supports versions 25-25"},
		{"share.version", 2, upgrade, "Invalid update version 2 for feature share.version. Local controller %d only supports versions 1-1"},
		{"eligible.leader.replicas.version", 1, upgrade, "Invalid update version 1 for feature eligible.leader.replicas.version. Local controller %d does not support this feature."},
		{"kraft.version", 2, upgrade, "Invalid update version 2 for feature kraft.version. Local controller %d only supports versions 0-1"},
		{"kraft.version", 0, safe, "Invalid update version 0 for feature kraft.version. Downgrading kraft.version is not supported."},
		{"streams.version", 1, upgrade, "Invalid update version 1 for feature streams.version. Local controller %d does not support this feature."},
		{"group.version", 0, upgrade, "Invalid update version 0 for feature group.version. Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade."},
		{"group.version", -1, safe, "Invalid update version -1 for feature group.version. A feature version cannot be less than 0."},
		{"group.version", 0, 7, "Invalid update version 0 for feature group.version. The controller does not support the given upgrade type."},
	} {
		code, msg := updateFeature(t, cl, other, tc.name, tc.level, tc.upgradeType, false)
		if want := prefix + strings.Replace(tc.why, "%d", fmt.Sprint(c.Controller()), 1); code != invalid || msg != want {
			t.Errorf("%s=%d type %d: %v %q,\nwant INVALID_UPDATE_VERSION %q", tc.name, tc.level, tc.upgradeType, kerr.ErrorForCode(code), msg, want)
		}
	}
	if code, msg := updateFeature(t, cl, other, "group.version", 0, safe, true); code != 0 {
		t.Fatalf("validate-only downgrade: %v %s", kerr.ErrorForCode(code), msg)
	}
	if _, f := featuresSeen(t, cl, other); f != bootstrapped {
		t.Fatalf("a validate-only update changed the levels: %q", f)
	}

	// Down to group.version 0: no KIP-848 consumer groups on any broker.
	if code, msg := updateFeature(t, cl, other, "group.version", 0, unsafe, false); code != 0 {
		t.Fatalf("group.version 0: %v %s", kerr.ErrorForCode(code), msg)
	}
	waitFeatureLevel(t, c, "group.version", 0)
	for _, id := range c.Running() {
		if _, f := featuresSeen(t, cl, id); f != "kraft.version=1 metadata.version=25 share.version=1 transaction.version=2 " {
			t.Errorf("node %d after the downgrade: finalized %q", id, f)
		}
		if got := kafkaGoKeys(t, c.Node(id).Addr(), 57, 68, 69, 75, 94); got != "57:0-2 68:- 69:- 75:0-0 94:-" {
			t.Errorf("node %d: kafka-go sees %s", id, got)
		}
	}
	hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	hb.Group, hb.MemberEpoch, hb.RebalanceTimeoutMillis, hb.SubscribedTopicNames = "g", 0, 30000, []string{"t"}
	kr, err := cl.Broker(int(other)).Request(testCtx(t, 10*time.Second), hb)
	if err != nil {
		t.Fatal(err)
	}
	if code := kr.(*kmsg.ConsumerGroupHeartbeatResponse).ErrorCode; code != kerr.UnsupportedVersion.Code {
		t.Errorf("ConsumerGroupHeartbeat with group.version 0: %v, want UNSUPPORTED_VERSION", kerr.ErrorForCode(code))
	}

	// The level is in the metadata log: a restarted node replays it.
	c.Node(other).Restart(t)
	c.WaitFor(t, 30*time.Second, "the restarted node to serve", func() bool {
		_, err := kmsg.NewPtrMetadataRequest().RequestWith(testCtx(t, 5*time.Second), c.Node(other).Client(t))
		return err == nil
	})
	if got := kafkaGoKeys(t, c.Node(other).Addr(), 68, 69); got != "68:- 69:-" {
		t.Errorf("after a restart, kafka-go sees %s", got)
	}

	// kadm's UpdateFeatures (v2) brings the consumer group APIs back.
	res, err := c.Admin(t).UpdateFeatures(testCtx(t, 20*time.Second), false, kadm.FeatureUpdate{Feature: "group.version", MaxVersionLevel: 1, UpgradeType: upgrade})
	if err != nil || res.Error() != nil {
		t.Fatalf("kadm UpdateFeatures group.version=1: %v %v", err, res.Error())
	}
	waitFeatureLevel(t, c, "group.version", 1)
	for _, id := range c.Running() {
		if got := kafkaGoKeys(t, c.Node(id).Addr(), 68, 69); got != "68:0-1 69:0-1" {
			t.Errorf("node %d after the upgrade: kafka-go sees %s", id, got)
		}
	}
	// kadm reports a refusal as the feature's error.
	res, err = c.Admin(t).UpdateFeatures(testCtx(t, 20*time.Second), false, kadm.FeatureUpdate{Feature: "transaction.version", MaxVersionLevel: 3, UpgradeType: upgrade})
	if err != nil || res["transaction.version"].Err != kerr.InvalidUpdateVersion {
		t.Errorf("kadm transaction.version=3: %v %+v, want INVALID_UPDATE_VERSION", err, res)
	}
}

// TestUpdateFeaturesAuthz: UpdateFeatures needs ALTER on the cluster, as
// ControllerApis.handleUpdateFeatures checks.
func TestUpdateFeaturesAuthz(t *testing.T) {
	sc := startSecured(t, 1)
	lit, allow := kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLPermissionTypeAllow
	sc.createACLs(t, []kmsg.CreateACLsRequestCreation{
		aclOf(kmsg.ACLResourceTypeCluster, "kafka-cluster", lit, pAlice, kmsg.ACLOperationAlter, allow),
		aclOf(kmsg.ACLResourceTypeCluster, "kafka-cluster", lit, pBob, kmsg.ACLOperationDescribe, allow),
	})
	for _, p := range []string{pAlice, pBob} {
		if _, err := kmsg.NewPtrMetadataRequest().RequestWith(testCtx(t, 10*time.Second), sc.clients[p]); err != nil {
			t.Fatal(err)
		}
	}
	if code, _ := updateFeature(t, sc.clients[pBob], 1, "group.version", 0, 2, false); code != kerr.ClusterAuthorizationFailed.Code {
		t.Errorf("bob (DESCRIBE only): %v, want CLUSTER_AUTHORIZATION_FAILED", kerr.ErrorForCode(code))
	}
	if lvl := sc.nodes[0].Node().Image().FeatureLevel("group.version"); lvl != 1 {
		t.Fatalf("a denied update changed group.version to %d", lvl)
	}
	if code, msg := updateFeature(t, sc.clients[pAlice], 1, "group.version", 0, 2, false); code != 0 {
		t.Errorf("alice (ALTER): %v %s", kerr.ErrorForCode(code), msg)
	}
	if lvl := sc.nodes[0].Node().Image().FeatureLevel("group.version"); lvl != 0 {
		t.Errorf("alice's update left group.version at %d", lvl)
	}
}
