package acl

import (
	"strings"
	"testing"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/cmd/strait/ctl/ctltest"
)

// TestACLSecuredCluster: users and ACLs made with the binary take effect
// on a Strait with a SCRAM listener and the StandardAuthorizer: alice,
// logged in through -X with the password `strait user create` gave her,
// is refused the ACL APIs (CLUSTER_AUTHORIZATION_FAILED, each ACL of a
// create) until the admin grants her DESCRIBE on the cluster; a wrong
// password is one line. Strait only: it is the authorizer under test,
// not the commands' compatibility.
func TestACLSecuredCluster(t *testing.T) {
	b := brokertest.Start(t, brokertest.WithConfig(
		"listeners=PLAINTEXT://127.0.0.1:0,SASL://127.0.0.1:0,CONTROLLER://127.0.0.1:0",
		"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
		"sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512",
		"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		// The PLAINTEXT listener (ANONYMOUS) is how the test bootstraps.
		"super.users=User:ANONYMOUS;User:admin"))
	plain := ctltest.Target{Name: "strait", Brokers: b.Addr()}
	sasl := ctltest.Target{Name: "strait", Brokers: b.Node().Addrs()["SASL"]}
	ctltest.Must(t, plain, "", "user", "create", "alice", "--password", "alice-pw")
	ctltest.Must(t, plain, "", "user", "create", "admin", "--password", "admin-pw", "--mechanism", "SCRAM-SHA-512")
	as := func(user, pass, mech string, args ...string) ctltest.Result {
		return ctltest.Run(t, sasl, "", append(args, "-X", "sasl.mechanism="+mech, "-X", "user="+user, "-X", "pass="+pass)...)
	}

	r := as("alice", "alice-pw", "SCRAM-SHA-256", "acl", "list")
	if r.Code != 1 || strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, "CLUSTER_AUTHORIZATION_FAILED") {
		t.Fatalf("%s", r)
	}
	r = as("alice", "alice-pw", "SCRAM-SHA-256", "acl", "create", "--allow-principal", "alice", "--operation", "all", "--topic", "t,u")
	if r.Code != 1 || strings.Count(r.Stderr, "CLUSTER_AUTHORIZATION_FAILED") != 2 || strings.Count(r.Stdout, "CLUSTER_AUTHORIZATION_FAILED") != 2 {
		t.Fatalf("%s", r)
	}

	r = as("admin", "admin-pw", "SCRAM-SHA-512", "acl", "create", "--allow-principal", "alice", "--operation", "describe", "--cluster")
	if r.Code != 0 {
		t.Fatalf("%s", r)
	}
	r = as("alice", "alice-pw", "SCRAM-SHA-256", "acl", "list", "--json")
	if got := rowStrings(rowsOf(t, r)); !same(got, []string{"ALLOW User:alice * CLUSTER:kafka-cluster LITERAL DESCRIBE"}) {
		t.Fatalf("alice lists %q", got)
	}

	r = as("alice", "wrong", "SCRAM-SHA-256", "cluster", "info", "--timeout", "5s")
	if r.Code != 1 || strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, "SASL_AUTHENTICATION_FAILED") {
		t.Fatalf("%s", r)
	}
}
