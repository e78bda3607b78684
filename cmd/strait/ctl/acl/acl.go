// Package acl is `strait acl create|list|delete`: Kafka ACLs through the
// public CreateAcls / DescribeAcls / DeleteAcls APIs, with the flags of
// rpk security acl and kafka-acls.sh (--allow-principal, --operation,
// --topic, --resource-pattern-type ...).
package acl

import (
	"flag"
	"strings"

	"github.com/strait-io/strait/cmd/strait/ctl/kit"
)

// Group is `strait acl`.
func Group() *kit.Group {
	return &kit.Group{
		Name:    "acl",
		Summary: "create, list and delete ACLs",
		Help: `An ACL is every combination of the principals, hosts, resources and
operations given (as rpk and kafka-acls.sh combine them). A principal without
a type is a user: alice is User:alice. Operations: all, read, write, create,
delete, alter, describe, cluster_action, describe_configs, alter_configs,
idempotent_write, create_tokens, describe_tokens.

list and delete take the same flags as filters; what is not given matches
anything. --resource-pattern-type (list/delete default any): literal or
prefixed match that pattern type with the name as given, any matches both,
match also finds the ACLs that apply to the name (the literal name, the
wildcard * and every prefix of it), as kafka-acls.sh --resource-pattern-type
match.`,
		Commands: []*kit.Command{createCommand(), listCommand(), deleteCommand()},
	}
}

// stringList is a repeatable flag that also takes comma-separated values
// (--operation read,write --operation describe).
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(v string) error {
	if v == "" {
		// Passed on as given: the cluster judges an empty name
		// (INVALID_REQUEST, per ACL).
		*l = append(*l, v)
		return nil
	}
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

// aclFlags are the flags of every acl command.
type aclFlags struct {
	AllowPrincipals, DenyPrincipals, Principals stringList
	AllowHosts, DenyHosts, Hosts                stringList
	Operations                                  stringList
	Topics, Groups, TransactionalIDs            stringList
	Cluster                                     bool
	PatternType                                 string

	// delete only
	All, DryRun bool
}

func registerFlags(fs *flag.FlagSet, f *aclFlags, defaultPattern string, filter bool) {
	fs.Var(&f.AllowPrincipals, "allow-principal", "a principal to allow, `USER` or Type:name (repeatable)")
	fs.Var(&f.DenyPrincipals, "deny-principal", "a principal to deny, `USER` or Type:name (repeatable)")
	fs.Var(&f.AllowHosts, "allow-host", "a `HOST` the allowed principals connect from (default *)")
	fs.Var(&f.DenyHosts, "deny-host", "a `HOST` the denied principals connect from (default *)")
	fs.Var(&f.Hosts, "host", "a `HOST`, for allowed and denied principals alike")
	fs.Var(&f.Operations, "operation", "an `OPERATION` (read, write, describe, all, ...; repeatable)")
	fs.Var(&f.Topics, "topic", "a topic `NAME` (repeatable)")
	fs.Var(&f.Groups, "group", "a group `NAME` (repeatable)")
	fs.Var(&f.TransactionalIDs, "transactional-id", "a transactional `ID` (repeatable)")
	fs.BoolVar(&f.Cluster, "cluster", false, "the cluster resource (kafka-cluster)")
	patterns := "literal or prefixed"
	if filter {
		patterns = "literal, prefixed, any or match"
		fs.Var(&f.Principals, "principal", "a principal, allowed or denied, `USER` or Type:name (repeatable)")
	}
	fs.StringVar(&f.PatternType, "resource-pattern-type", defaultPattern, "`TYPE`: "+patterns)
}
