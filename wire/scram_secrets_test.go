package wire

import (
	"reflect"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
	"github.com/strait-io/strait/wire/tlstest"
)

// DescribeScramCredentialSecrets is answered on an SSL listener and
// refused on a PLAINTEXT one of the same server, with
// CLUSTER_AUTHORIZATION_FAILED and a message naming the need, before the
// service sees it: the keys never cross an unencrypted link.
func TestScramSecretsNeedEncryptedListener(t *testing.T) {
	var c mirrorCase
	for _, mc := range mirrorCases() {
		if mc.name == "DescribeScramCredentialSecrets" {
			c = mc
		}
	}
	svc := newMirrorStandIn([]mirrorCase{c})
	ca := tlstest.NewCA(t, "ca")
	s := newTestServerSvc(t, Config{Listeners: []Listener{
		{Name: "PLAINTEXT", Host: "127.0.0.1"},
		{Name: "SSL", Host: "127.0.0.1", SecurityProtocol: SecurityProtocolSSL, TLS: tlstest.ServerConfig(ca.Issue(t, "broker"), ca.Pool())},
	}}, Services{Mirror: svc}, nil)

	plain := dialRaw(t, s.plaintextAddr())
	plain.send(1, c.req())
	refused := mirrormsg.NewPtrDescribeScramCredentialSecretsResponse()
	plain.readResp(refused)
	if refused.ErrorCode != kerr.ClusterAuthorizationFailed.Code || refused.ErrorMessage == nil ||
		!strings.Contains(*refused.ErrorMessage, "encrypted listener") || len(refused.Credentials) != 0 {
		t.Fatalf("on PLAINTEXT: %+v (message %v)", refused, refused.ErrorMessage)
	}
	if n := len(svc.received()); n != 0 {
		t.Fatalf("the service was asked %d times for a PLAINTEXT request", n)
	}

	ssl := dialTLS(t, s.Addrs()["SSL"], tlstest.ClientConfig(ca, ca.Issue(t, "mirror")))
	ssl.send(2, c.req())
	got := mirrormsg.NewPtrDescribeScramCredentialSecretsResponse()
	ssl.readResp(got)
	if want := c.resp(); !reflect.DeepEqual(got, want) {
		t.Fatalf("on SSL: got %v, the service answered %v", got, want)
	}
	if r := svc.received(); len(r) != 1 || !reflect.DeepEqual(r[0], c.req()) {
		t.Fatalf("the service received %v", r)
	}
}
