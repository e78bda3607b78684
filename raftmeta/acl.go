package raftmeta

import (
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// aclClusterName is the only name of the CLUSTER resource
// (Resource.CLUSTER_NAME).
const aclClusterName = "kafka-cluster"

// aclWildcard is a LITERAL resource name matching every name
// (ResourcePattern.WILDCARD_RESOURCE).
const aclWildcard = "*"

// ACLResourceTypeClusterMirror is KIP-1279's CLUSTER_MIRROR ACL resource
// type (digest 2.4): CREATE for CreateClusterMirror, ALTER for the topic
// and delete RPCs, DESCRIBE for List/DescribeMirrors, ALTER_CONFIGS and
// DESCRIBE_CONFIGS for its configs. The KIP names the type but no code
// was found in the prototypes; 8 is the next free code of Kafka's
// ResourceType (USER is 7).
const ACLResourceTypeClusterMirror = 8

// The protocol's codes beyond the ones Kafka knows parse as UNKNOWN (its
// enums' fromCode).
func normResourceType(v kmsg.ACLResourceType) kmsg.ACLResourceType {
	if v > ACLResourceTypeClusterMirror {
		return kmsg.ACLResourceTypeUnknown
	}
	return v
}

func normPatternType(v kmsg.ACLResourcePatternType) kmsg.ACLResourcePatternType {
	if v > kmsg.ACLResourcePatternTypePrefixed {
		return kmsg.ACLResourcePatternTypeUnknown
	}
	return v
}

func normOperation(v kmsg.ACLOperation) kmsg.ACLOperation {
	if v > kmsg.ACLOperationDescribeTokens {
		return kmsg.ACLOperationUnknown
	}
	return v
}

func normPermission(v kmsg.ACLPermissionType) kmsg.ACLPermissionType {
	if v > kmsg.ACLPermissionTypeAllow {
		return kmsg.ACLPermissionTypeUnknown
	}
	return v
}

// aclFilter is Kafka's AclBindingFilter: a ResourcePatternFilter and an
// AccessControlEntryFilter. Nil strings and ANY codes match everything.
type aclFilter struct {
	resourceType kmsg.ACLResourceType
	name         *string
	patternType  kmsg.ACLResourcePatternType
	principal    *string
	host         *string
	operation    kmsg.ACLOperation
	permission   kmsg.ACLPermissionType
}

// unknown reports a filter with an UNKNOWN element, which Kafka rejects
// (AclControlManager.validateFilter, DescribeAclsRequest).
func (f *aclFilter) unknown() (bool, string) {
	if f.resourceType == kmsg.ACLResourceTypeUnknown || f.patternType == kmsg.ACLResourcePatternTypeUnknown {
		return true, "Unknown patternFilter."
	}
	if f.operation == kmsg.ACLOperationUnknown || f.permission == kmsg.ACLPermissionTypeUnknown {
		return true, "Unknown entryFilter."
	}
	return false, ""
}

// matches is AclBindingFilter.matches: ResourcePatternFilter.matches, where
// a MATCH pattern filter with a name matches the LITERAL bindings of that
// name and the wildcard, and the PREFIXED bindings the name starts with;
// then AccessControlEntryFilter.matches.
func (f *aclFilter) matches(a *ACLBinding) bool {
	rt := kmsg.ACLResourceType(a.ResourceType)
	pt := kmsg.ACLResourcePatternType(a.PatternType)
	if f.resourceType != kmsg.ACLResourceTypeAny && f.resourceType != rt {
		return false
	}
	if f.patternType != kmsg.ACLResourcePatternTypeAny && f.patternType != kmsg.ACLResourcePatternTypeMatch && f.patternType != pt {
		return false
	}
	if f.name != nil {
		name := *f.name
		if f.patternType == kmsg.ACLResourcePatternTypeAny || f.patternType == pt {
			if name != a.ResourceName {
				return false
			}
		} else {
			switch pt {
			case kmsg.ACLResourcePatternTypeLiteral:
				if name != a.ResourceName && a.ResourceName != aclWildcard {
					return false
				}
			case kmsg.ACLResourcePatternTypePrefixed:
				if !strings.HasPrefix(name, a.ResourceName) {
					return false
				}
			default:
				return false
			}
		}
	}
	if f.principal != nil && *f.principal != a.Principal {
		return false
	}
	if f.host != nil && *f.host != a.Host {
		return false
	}
	if f.operation != kmsg.ACLOperationAny && f.operation != kmsg.ACLOperation(a.Operation) {
		return false
	}
	return f.permission == kmsg.ACLPermissionTypeAny || f.permission == kmsg.ACLPermissionType(a.PermissionType)
}

// validateNewACL is AclControlManager.validateNewAcl plus AclApis' checks
// of the resource name; it returns Kafka's message, or "".
func validateNewACL(c *kmsg.CreateACLsRequestCreation) string {
	rt := normResourceType(c.ResourceType)
	switch {
	case rt == kmsg.ACLResourceTypeUnknown || rt == kmsg.ACLResourceTypeAny:
		return "Invalid resourceType " + rt.String()
	case c.ResourcePatternType != kmsg.ACLResourcePatternTypeLiteral && c.ResourcePatternType != kmsg.ACLResourcePatternTypePrefixed:
		return "Invalid patternType " + normPatternType(c.ResourcePatternType).String()
	case normOperation(c.Operation) == kmsg.ACLOperationUnknown || c.Operation == kmsg.ACLOperationAny:
		return "Invalid operation " + normOperation(c.Operation).String()
	case c.PermissionType != kmsg.ACLPermissionTypeDeny && c.PermissionType != kmsg.ACLPermissionTypeAllow:
		return "Invalid permissionType " + normPermission(c.PermissionType).String()
	case rt == kmsg.ACLResourceTypeCluster && c.ResourceName != aclClusterName:
		return "The only valid name for the CLUSTER resource is " + aclClusterName
	case c.ResourceName == "":
		return "Resource name should not be empty"
	}
	return ""
}

// sameACL compares everything but the id (StandardAcl equality).
func sameACL(a, b *ACLBinding) bool {
	x, y := *a, *b
	x.ID, y.ID = Uuid{}, Uuid{}
	return x == y
}
