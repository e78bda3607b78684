package config

import (
	"fmt"
	"strings"
)

// StandardAuthorizerClass is the one authorizer.class.name Strait
// implements: Kafka's KRaft authorizer, whose ACLs are in the metadata log.
const StandardAuthorizerClass = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"

// Authorizer is the ACL enforcement configuration.
type Authorizer struct {
	// Enabled is authorizer.class.name set to StandardAuthorizerClass;
	// unset (Kafka's default) enforces nothing.
	Enabled bool
	// SuperUsers is super.users: principals allowed everything.
	SuperUsers []string
	// AllowEveryoneIfNoACL is allow.everyone.if.no.acl.found.
	AllowEveryoneIfNoACL bool
}

func (c *Config) buildAuthorizer(v values) error {
	switch class := strings.TrimSpace(v.str("authorizer.class.name")); class {
	case "":
	case StandardAuthorizerClass:
		c.Authorizer.Enabled = true
	case "kafka.security.authorizer.AclAuthorizer":
		return fmt.Errorf("authorizer.class.name: %s is ZooKeeper's authorizer, removed in Kafka 4.0; use %s", class, StandardAuthorizerClass)
	default:
		return fmt.Errorf("authorizer.class.name: class %s is not available; the only authorizer is %s", class, StandardAuthorizerClass)
	}
	users, err := parseSuperUsers(v.str("super.users"))
	if err != nil {
		return err
	}
	c.Authorizer.SuperUsers = users
	c.Authorizer.AllowEveryoneIfNoACL = v.boolean("allow.everyone.if.no.acl.found")
	return nil
}

// parseSuperUsers splits super.users: principals separated by semicolons
// (a certificate's distinguished name has commas), each Type:name.
func parseSuperUsers(v string) ([]string, error) {
	var out []string
	for _, p := range strings.Split(v, ";") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if i := strings.IndexByte(p, ':'); i <= 0 || i == len(p)-1 {
			return nil, fmt.Errorf("super.users: %q is not a principal of the form User:name (principals are separated by semicolons)", p)
		}
		out = append(out, p)
	}
	return out, nil
}
