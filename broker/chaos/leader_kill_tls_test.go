package chaos

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/wire/tlstest"
)

// TestLeaderKillTLS is TestLeaderKill, shorter, on a cluster whose every
// listener is SSL with client certificates required: clients, the
// follower fetchers, raft and the controller channel all go over TLS,
// and the killed leaders' successors and restarted nodes reconnect
// through new handshakes. Nothing acknowledged may be lost or
// duplicated, and the replicas must agree.
func TestLeaderKillTLS(t *testing.T) {
	ca := tlstest.NewCA(t, "strait-chaos-ca")
	dir := t.TempDir()
	leaderKill(t, plan{records: 5_000, minFaults: 3, timeout: 60 * time.Second},
		brokertest.WithConfig(tlstest.AllSSLMutualConfig(t, dir, ca)...),
		brokertest.WithClientOpts(kgo.DialTLSConfig(tlstest.ClientConfig(ca, ca.Issue(t, "chaos-client")))),
	)
}
