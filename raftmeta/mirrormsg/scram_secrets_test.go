package mirrormsg_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// The salt and keys of a SCRAM credential never show when a message is
// printed, whatever the verb.
func TestScramSecretsRedacted(t *testing.T) {
	secret := []byte("SECRETSECRET")
	resp := mirrormsg.NewPtrDescribeScramCredentialSecretsResponse()
	resp.Credentials = []mirrormsg.DescribeScramCredentialSecretsResponseCredential{{
		Name: "alice", Mechanism: 2, Salt: secret, StoredKey: secret, ServerKey: secret, Iterations: 4096,
	}}
	req := mirrormsg.NewPtrSyncScramCredentialsRequest()
	req.Upsertions = []mirrormsg.SyncScramCredentialsRequestUpsertion{{
		Name: "alice", Mechanism: 2, Salt: secret, StoredKey: secret, ServerKey: secret, Iterations: 4096,
	}}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		for _, m := range []any{resp, *resp, req, resp.Credentials, req.Upsertions[0]} {
			out := fmt.Sprintf(verb, m)
			if strings.Contains(out, "SECRET") || strings.Contains(out, fmt.Sprint(secret)) || strings.Contains(out, "5345435245") {
				t.Errorf("%s of %T shows the secret: %s", verb, m, out)
			}
			if !strings.Contains(out, "alice") {
				t.Errorf("%s of %T lost the user name: %s", verb, m, out)
			}
		}
	}
}
