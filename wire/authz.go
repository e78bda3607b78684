package wire

import (
	"context"
	"reflect"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/authz"
	"github.com/strait-io/strait/raftmeta/authz/reqctx"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// Resource types and operations as the handlers name them (Kafka's
// ResourceType and AclOperation codes).
const (
	resTopic   = kmsg.ACLResourceTypeTopic
	resGroup   = kmsg.ACLResourceTypeGroup
	resCluster = kmsg.ACLResourceTypeCluster
	resTxnID   = kmsg.ACLResourceTypeTransactionalId
	// resMirror is KIP-1279's CLUSTER_MIRROR resource (raftmeta's
	// ACLResourceTypeClusterMirror).
	resMirror = kmsg.ACLResourceType(raftmeta.ACLResourceTypeClusterMirror)

	opRead            = kmsg.ACLOperationRead
	opWrite           = kmsg.ACLOperationWrite
	opCreate          = kmsg.ACLOperationCreate
	opDelete          = kmsg.ACLOperationDelete
	opAlter           = kmsg.ACLOperationAlter
	opDescribe        = kmsg.ACLOperationDescribe
	opClusterAction   = kmsg.ACLOperationClusterAction
	opDescribeConfigs = kmsg.ACLOperationDescribeConfigs
	opAlterConfigs    = kmsg.ACLOperationAlterConfigs
	opIdempotentWrite = kmsg.ACLOperationIdempotentWrite
)

// Error codes of a denial.
var (
	errTopicAuth   = kerr.TopicAuthorizationFailed.Code
	errGroupAuth   = kerr.GroupAuthorizationFailed.Code
	errClusterAuth = kerr.ClusterAuthorizationFailed.Code
	errTxnAuth     = kerr.TransactionalIDAuthorizationFailed.Code
	errMirrorAuth  = mirrormsg.ClusterMirrorAuthorizationFailed.Code
)

// authCheck answers a request's authorization questions. With enforcement
// off (no authorizer.class.name) every check passes, so the handlers read
// the same either way and an unsecured broker pays one nil test.
type authCheck struct {
	on bool
	r  authz.Request
}

// auth returns the checker of the request in ctx.
func (s *Server) auth(ctx context.Context) authCheck {
	a := s.cfg.Authorizer
	if a == nil {
		return authCheck{}
	}
	info := reqctx.From(ctx)
	return authCheck{on: true, r: a.For(a.Index(s.svc.Cluster.Image().ACLs), info.Principal, info.ClientHost)}
}

// allowed is AuthHelper.authorize on one resource.
func (c authCheck) allowed(rt kmsg.ACLResourceType, name string, op kmsg.ACLOperation) bool {
	return !c.on || c.r.Allowed(rt, name, op)
}

// cluster checks op on the CLUSTER resource.
func (c authCheck) cluster(op kmsg.ACLOperation) bool {
	return c.allowed(resCluster, authz.ClusterName, op)
}

// allowedAny is AuthHelper.authorizeByResourceType.
func (c authCheck) allowedAny(rt kmsg.ACLResourceType, op kmsg.ACLOperation) bool {
	return !c.on || c.r.AllowedAny(rt, op)
}

// The operations each resource type supports (Kafka's
// AclEntry.supportedOperations), for the AuthorizedOperations bit fields.
var supportedOps = map[kmsg.ACLResourceType][]kmsg.ACLOperation{
	resTopic:   {opRead, opWrite, opCreate, opDescribe, opDelete, opAlter, opDescribeConfigs, opAlterConfigs},
	resGroup:   {opRead, opDescribe, opDelete, opDescribeConfigs, opAlterConfigs},
	resCluster: {opCreate, opClusterAction, opDescribeConfigs, opAlterConfigs, opIdempotentWrite, opAlter, opDescribe},
	resTxnID:   {opDescribe, opWrite},
	resMirror:  {opCreate, opAlter, opDescribe, opDescribeConfigs, opAlterConfigs},
}

// authorizedOps is AuthHelper.authorizedOperations: the bit field of the
// supported operations allowed on the resource. With enforcement off it is
// unlimited, as Kafka's is without an authorizer; the caller keeps its own
// value then (off reports false).
func (c authCheck) authorizedOps(rt kmsg.ACLResourceType, name string) (int32, bool) {
	if !c.on {
		return 0, false
	}
	var bits int32
	for _, op := range supportedOps[rt] {
		if c.r.Allowed(rt, name, op) {
			bits |= 1 << op
		}
	}
	return bits, true
}

// deniedResponse is kreq's response with its top-level ErrorCode set to
// code: the whole request denied, for the APIs whose response has one
// error for the request (Kafka's getErrorResponse of those requests).
func deniedResponse(kreq kmsg.Request, code int16) kmsg.Response {
	resp := kreq.ResponseKind()
	resp.SetVersion(kreq.GetVersion())
	if f := reflect.ValueOf(resp).Elem().FieldByName("ErrorCode"); f.IsValid() && f.CanSet() {
		f.SetInt(int64(code))
	}
	return resp
}

// deniedOnCluster is deniedResponse with CLUSTER_AUTHORIZATION_FAILED and,
// for a response that has one, Kafka's ErrorMessage for it.
func deniedOnCluster(kreq kmsg.Request) kmsg.Response {
	resp := deniedResponse(kreq, errClusterAuth)
	if f := reflect.ValueOf(resp).Elem().FieldByName("ErrorMessage"); f.IsValid() && f.CanSet() && f.Type() == reflect.TypeFor[*string]() {
		f.Set(reflect.ValueOf(kmsg.StringPtr(kerr.ClusterAuthorizationFailed.Description)))
	}
	return resp
}

// splitAllowed keeps in *items those allowed accepts and returns the
// others, in order (AuthHelper.partitionSeqByAuthorized).
func splitAllowed[T any](items *[]T, allowed func(*T) bool) []T {
	var denied []T
	keep := (*items)[:0]
	for i := range *items {
		if allowed(&(*items)[i]) {
			keep = append(keep, (*items)[i])
		} else {
			denied = append(denied, (*items)[i])
		}
	}
	*items = keep
	return denied
}

// deniedPartitions is kreq's response with code as its top-level error
// (when it has one) and as the error of every partition the request
// names, for the inter-broker RPCs a client without CLUSTER_ACTION is
// refused whole (the share-state and mirror-state RPCs). It reads the
// request's Topics[].Partitions[] by reflection: those messages share the
// shape but no Go type.
func deniedPartitions(kreq kmsg.Request, code int16) kmsg.Response {
	resp := deniedResponse(kreq, code)
	reqTopics := reflect.ValueOf(kreq).Elem().FieldByName("Topics")
	respTopics := reflect.ValueOf(resp).Elem().FieldByName("Topics")
	if !reqTopics.IsValid() || !respTopics.IsValid() || reqTopics.Kind() != reflect.Slice || respTopics.Kind() != reflect.Slice {
		return resp
	}
	for i := 0; i < reqTopics.Len(); i++ {
		rqt := reqTopics.Index(i)
		rst := newDefault(respTopics.Type().Elem())
		copySameFields(rst, rqt, "TopicID", "Topic", "Name", "TopicName")
		rqp, rsp := rqt.FieldByName("Partitions"), rst.FieldByName("Partitions")
		if rqp.IsValid() && rsp.IsValid() && rqp.Kind() == reflect.Slice && rsp.Kind() == reflect.Slice {
			for j := 0; j < rqp.Len(); j++ {
				p := newDefault(rsp.Type().Elem())
				if q := rqp.Index(j); q.Kind() == reflect.Int32 {
					for _, name := range []string{"Partition", "PartitionIndex"} {
						if f := p.FieldByName(name); f.IsValid() && f.Kind() == reflect.Int32 {
							f.SetInt(q.Int())
						}
					}
				} else {
					copySameFields(p, q, "Partition", "PartitionIndex")
				}
				if f := p.FieldByName("ErrorCode"); f.IsValid() && f.Kind() == reflect.Int16 {
					f.SetInt(int64(code))
				}
				rsp.Set(reflect.Append(rsp, p))
			}
		}
		respTopics.Set(reflect.Append(respTopics, rst))
	}
	return resp
}

// newDefault is a new value of t with its Default method applied, as
// kmsg's New... constructors do.
func newDefault(t reflect.Type) reflect.Value {
	v := reflect.New(t)
	if d, ok := v.Interface().(interface{ Default() }); ok {
		d.Default()
	}
	return v.Elem()
}

// copySameFields copies the named fields src and dst both have, of the
// same type.
func copySameFields(dst, src reflect.Value, names ...string) {
	for _, n := range names {
		d, s := dst.FieldByName(n), src.FieldByName(n)
		if d.IsValid() && s.IsValid() && d.Type() == s.Type() {
			d.Set(s)
		}
	}
}
