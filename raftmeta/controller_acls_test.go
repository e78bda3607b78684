package raftmeta

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func aclCreation(rt kmsg.ACLResourceType, name string, pt kmsg.ACLResourcePatternType, principal string, op kmsg.ACLOperation, perm kmsg.ACLPermissionType) kmsg.CreateACLsRequestCreation {
	c := kmsg.NewCreateACLsRequestCreation()
	c.ResourceType, c.ResourceName, c.ResourcePatternType = rt, name, pt
	c.Principal, c.Host, c.Operation, c.PermissionType = principal, "*", op, perm
	return c
}

func createACLs(c *Controller, creations ...kmsg.CreateACLsRequestCreation) *kmsg.CreateACLsResponse {
	req := kmsg.NewPtrCreateACLsRequest()
	req.Version = 3
	req.Creations = creations
	return c.CreateACLs(context.Background(), req)
}

func describeACLs(c *Controller, rt kmsg.ACLResourceType, name *string, pt kmsg.ACLResourcePatternType, principal *string) (string, *kmsg.DescribeACLsResponse) {
	req := kmsg.NewPtrDescribeACLsRequest()
	req.Version = 3
	req.ResourceType, req.ResourceName, req.ResourcePatternType = rt, name, pt
	req.Principal = principal
	req.Operation, req.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	resp := c.DescribeACLs(context.Background(), req)
	var out []string
	for _, r := range resp.Resources {
		for _, a := range r.ACLs {
			out = append(out, fmt.Sprintf("%s:%s:%s:%s:%s:%s", r.ResourceType, r.ResourceName, r.ResourcePatternType, a.Principal, a.Operation, a.PermissionType))
		}
	}
	return strings.Join(out, " "), resp
}

const (
	topicR   = kmsg.ACLResourceTypeTopic
	groupR   = kmsg.ACLResourceTypeGroup
	literal  = kmsg.ACLResourcePatternTypeLiteral
	prefixed = kmsg.ACLResourcePatternTypePrefixed
	read     = kmsg.ACLOperationRead
	write    = kmsg.ACLOperationWrite
	allow    = kmsg.ACLPermissionTypeAllow
	deny     = kmsg.ACLPermissionTypeDeny
)

func TestACLs(t *testing.T) {
	c, log := newTestController(t, Config{}, 1)
	resp := createACLs(c,
		aclCreation(topicR, "orders", literal, "User:alice", read, allow),
		aclCreation(topicR, "*", literal, "User:bob", read, allow),
		aclCreation(topicR, "ord", prefixed, "User:carol", write, deny),
		aclCreation(topicR, "other", literal, "User:alice", read, allow),
		aclCreation(groupR, "g", literal, "User:alice", read, allow),
		aclCreation(kmsg.ACLResourceTypeCluster, "kafka-cluster", literal, "User:admin", kmsg.ACLOperationAlter, allow),
		// Again: succeeds, stored once.
		aclCreation(topicR, "orders", literal, "User:alice", read, allow),
	)
	for i, r := range resp.Results {
		if r.ErrorCode != 0 {
			t.Fatalf("creation %d: %s %s", i, codeName(r.ErrorCode), deref(r.ErrorMessage))
		}
	}
	if n := len(log.Image().ACLs); n != 6 {
		t.Fatalf("%d ACLs stored, want 6", n)
	}
	createACLs(c, aclCreation(topicR, "orders", literal, "User:alice", read, allow))
	if n := len(log.Image().ACLs); n != 6 {
		t.Fatalf("re-creating an ACL stored it again: %d", n)
	}

	s := kmsg.StringPtr
	for _, tc := range []struct {
		name      string
		rt        kmsg.ACLResourceType
		res       *string
		pt        kmsg.ACLResourcePatternType
		principal *string
		want      string
	}{
		{"everything", kmsg.ACLResourceTypeAny, nil, kmsg.ACLResourcePatternTypeAny, nil,
			"TOPIC:*:LITERAL:User:bob:READ:ALLOW TOPIC:ord:PREFIXED:User:carol:WRITE:DENY TOPIC:orders:LITERAL:User:alice:READ:ALLOW TOPIC:other:LITERAL:User:alice:READ:ALLOW GROUP:g:LITERAL:User:alice:READ:ALLOW CLUSTER:kafka-cluster:LITERAL:User:admin:ALTER:ALLOW"},
		// LITERAL matches the exact name only.
		{"literal", topicR, s("orders"), literal, nil, "TOPIC:orders:LITERAL:User:alice:READ:ALLOW"},
		// MATCH: the literal name, the wildcard, and prefixes of it.
		{"match", topicR, s("orders"), kmsg.ACLResourcePatternTypeMatch, nil,
			"TOPIC:*:LITERAL:User:bob:READ:ALLOW TOPIC:ord:PREFIXED:User:carol:WRITE:DENY TOPIC:orders:LITERAL:User:alice:READ:ALLOW"},
		// ANY with a name: that exact name in any pattern type.
		{"any pattern", topicR, s("ord"), kmsg.ACLResourcePatternTypeAny, nil, "TOPIC:ord:PREFIXED:User:carol:WRITE:DENY"},
		{"prefixed", topicR, s("orders"), prefixed, nil, ""},
		{"principal", kmsg.ACLResourceTypeAny, nil, kmsg.ACLResourcePatternTypeAny, s("User:alice"),
			"TOPIC:orders:LITERAL:User:alice:READ:ALLOW TOPIC:other:LITERAL:User:alice:READ:ALLOW GROUP:g:LITERAL:User:alice:READ:ALLOW"},
		{"group", groupR, nil, kmsg.ACLResourcePatternTypeMatch, nil, "GROUP:g:LITERAL:User:alice:READ:ALLOW"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, resp := describeACLs(c, tc.rt, tc.res, tc.pt, tc.principal)
			if resp.ErrorCode != 0 || got != tc.want {
				t.Fatalf("got %s %q\nwant %q", codeName(resp.ErrorCode), got, tc.want)
			}
		})
	}
	if _, resp := describeACLs(c, kmsg.ACLResourceTypeUnknown, nil, kmsg.ACLResourcePatternTypeAny, nil); resp.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("unknown filter: %s", codeName(resp.ErrorCode))
	}
	if _, resp := describeACLs(c, kmsg.ACLResourceType(42), nil, kmsg.ACLResourcePatternTypeAny, nil); resp.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("out-of-range filter: %s", codeName(resp.ErrorCode))
	}

	// Two overlapping filters and an invalid one: alice's topic ACLs are
	// removed once, listed under both filters.
	req := kmsg.NewPtrDeleteACLsRequest()
	req.Version = 3
	f1 := kmsg.NewDeleteACLsRequestFilter()
	f1.ResourceType, f1.ResourcePatternType, f1.Principal = topicR, kmsg.ACLResourcePatternTypeAny, s("User:alice")
	f1.Operation, f1.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	f2 := f1
	f2.Principal, f2.ResourceName, f2.ResourcePatternType = nil, s("orders"), kmsg.ACLResourcePatternTypeMatch
	f2.Operation = read
	f3 := f1
	f3.PermissionType = kmsg.ACLPermissionTypeUnknown
	req.Filters = []kmsg.DeleteACLsRequestFilter{f1, f2, f3}
	before := log.proposals()
	dresp := c.DeleteACLs(context.Background(), req)
	var got []string
	for _, r := range dresp.Results {
		var names []string
		for _, m := range r.MatchingACLs {
			names = append(names, m.ResourceName+"/"+m.Principal)
		}
		got = append(got, codeName(r.ErrorCode)+fmt.Sprint(names))
	}
	want := []string{"NONE[orders/User:alice other/User:alice]", "NONE[orders/User:alice */User:bob]", "INVALID_REQUEST[]"}
	if !slices.Equal(got, want) {
		t.Fatalf("delete results %v, want %v", got, want)
	}
	if deref(dresp.Results[2].ErrorMessage) != "Unknown entryFilter." {
		t.Fatalf("message %q", deref(dresp.Results[2].ErrorMessage))
	}
	if log.proposals() != before+1 {
		t.Fatalf("deletes took %d batches", log.proposals()-before)
	}
	if all, _ := describeACLs(c, kmsg.ACLResourceTypeAny, nil, kmsg.ACLResourcePatternTypeAny, nil); all != "TOPIC:ord:PREFIXED:User:carol:WRITE:DENY GROUP:g:LITERAL:User:alice:READ:ALLOW CLUSTER:kafka-cluster:LITERAL:User:admin:ALTER:ALLOW" {
		t.Fatalf("left %q", all)
	}
}

func TestCreateACLsValidation(t *testing.T) {
	c, log := newTestController(t, Config{}, 1)
	for _, tc := range []struct {
		name string
		cr   kmsg.CreateACLsRequestCreation
		msg  string
	}{
		{"any resource", aclCreation(kmsg.ACLResourceTypeAny, "x", literal, "User:a", read, allow), "Invalid resourceType ANY"},
		{"unknown resource", aclCreation(kmsg.ACLResourceType(99), "x", literal, "User:a", read, allow), "Invalid resourceType UNKNOWN"},
		{"match pattern", aclCreation(topicR, "x", kmsg.ACLResourcePatternTypeMatch, "User:a", read, allow), "Invalid patternType MATCH"},
		{"any operation", aclCreation(topicR, "x", literal, "User:a", kmsg.ACLOperationAny, allow), "Invalid operation ANY"},
		{"unknown operation", aclCreation(topicR, "x", literal, "User:a", kmsg.ACLOperationUnknown, allow), "Invalid operation UNKNOWN"},
		{"any permission", aclCreation(topicR, "x", literal, "User:a", read, kmsg.ACLPermissionTypeAny), "Invalid permissionType ANY"},
		{"empty name", aclCreation(topicR, "", literal, "User:a", read, allow), "Resource name should not be empty"},
		{"cluster name", aclCreation(kmsg.ACLResourceTypeCluster, "c", literal, "User:a", read, allow), "The only valid name for the CLUSTER resource is kafka-cluster"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := createACLs(c, tc.cr, aclCreation(topicR, tc.name, literal, "User:ok", read, allow))
			if r := resp.Results[0]; r.ErrorCode != kerr.InvalidRequest.Code || deref(r.ErrorMessage) != tc.msg {
				t.Fatalf("got %s %q, want INVALID_REQUEST %q", codeName(r.ErrorCode), deref(r.ErrorMessage), tc.msg)
			}
			// The valid creation beside it goes through.
			if r := resp.Results[1]; r.ErrorCode != 0 {
				t.Fatalf("valid creation: %s", codeName(r.ErrorCode))
			}
		})
	}
	if n := len(log.Image().ACLs); n != 8 {
		t.Fatalf("%d ACLs, want the 8 valid ones", n)
	}
	// v0 has no pattern type: LITERAL.
	req := kmsg.NewPtrCreateACLsRequest()
	req.Version = 0
	cr := aclCreation(topicR, "v0", kmsg.ACLResourcePatternTypeUnknown, "User:a", read, allow)
	req.Creations = []kmsg.CreateACLsRequestCreation{cr}
	if r := c.CreateACLs(context.Background(), req).Results[0]; r.ErrorCode != 0 {
		t.Fatalf("v0: %s", codeName(r.ErrorCode))
	}
	if got, _ := describeACLs(c, topicR, kmsg.StringPtr("v0"), literal, nil); got != "TOPIC:v0:LITERAL:User:a:READ:ALLOW" {
		t.Fatalf("v0 ACL: %q", got)
	}
}

func TestProducerIDsAndBrokers(t *testing.T) {
	c, log := newTestController(t, Config{}, 1)
	ctx := context.Background()
	b1 := log.Image().Brokers[1]
	if b1.Epoch != 1 || b1.IncarnationID.IsZero() || b1.Fenced || len(b1.Endpoints) != 1 {
		t.Fatalf("broker 1 %+v", *b1)
	}

	first, count, err := c.AllocateProducerIDs(ctx, 1, b1.Epoch)
	if err != nil || first != 0 || count != 1000 {
		t.Fatalf("first block: %d %d %v", first, count, err)
	}
	first, count, err = c.AllocateProducerIDs(ctx, 1, b1.Epoch)
	if err != nil || first != 1000 || count != 1000 || log.Image().NextProducerID != 2000 {
		t.Fatalf("second block: %d %d %v", first, count, err)
	}
	if _, _, err := c.AllocateProducerIDs(ctx, 1, b1.Epoch+1); !errors.Is(err, kerr.StaleBrokerEpoch) {
		t.Fatalf("wrong epoch: %v", err)
	}
	if _, _, err := c.AllocateProducerIDs(ctx, 9, 1); !errors.Is(err, kerr.StaleBrokerEpoch) {
		t.Fatalf("unregistered broker: %v", err)
	}

	// Concurrent allocations never overlap.
	var mu sync.Mutex
	var firsts []int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, _, err := c.AllocateProducerIDs(ctx, 1, b1.Epoch)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			firsts = append(firsts, f)
			mu.Unlock()
		}()
	}
	wg.Wait()
	slices.Sort(firsts)
	for i, f := range firsts {
		if f != int64(2000+1000*i) {
			t.Fatalf("blocks %v", firsts)
		}
	}

	// Registering again (a restart) raises the epoch; the old epoch is
	// stale. The same registration retried appends nothing.
	if err := c.RegisterBroker(ctx, Broker{ID: 1, Rack: "r", IncarnationID: testID(5)}); err != nil {
		t.Fatal(err)
	}
	b1b := log.Image().Brokers[1]
	if b1b.Epoch <= b1.Epoch || b1b.Rack != "r" || b1b.IncarnationID != testID(5) {
		t.Fatalf("re-registered %+v (was epoch %d)", *b1b, b1.Epoch)
	}
	before := log.proposals()
	if err := c.RegisterBroker(ctx, Broker{ID: 1, Rack: "r", IncarnationID: testID(5)}); err != nil || log.proposals() != before {
		t.Fatalf("retried registration: %v, %d batches", err, log.proposals()-before)
	}
	if _, _, err := c.AllocateProducerIDs(ctx, 1, b1.Epoch); !errors.Is(err, kerr.StaleBrokerEpoch) {
		t.Fatalf("old epoch after re-registration: %v", err)
	}
	if err := c.RegisterBroker(ctx, Broker{ID: -1}); err == nil {
		t.Fatal("registered broker -1")
	}

	// Followers refuse writes.
	log.mu.Lock()
	log.leader = false
	log.mu.Unlock()
	if _, _, err := c.AllocateProducerIDs(ctx, 1, b1b.Epoch); !errors.Is(err, ErrNotController) || !errors.Is(err, kerr.NotController) {
		t.Fatalf("follower: %v", err)
	}
	if err := c.RegisterBroker(ctx, Broker{ID: 2}); !errors.Is(err, ErrNotController) {
		t.Fatalf("follower: %v", err)
	}
	// DescribeACLs reads the local image on any node.
	if _, resp := describeACLs(c, kmsg.ACLResourceTypeAny, nil, kmsg.ACLResourcePatternTypeAny, nil); resp.ErrorCode != 0 {
		t.Fatalf("describe on a follower: %s", codeName(resp.ErrorCode))
	}
}
