package broker

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"
	fsasl "github.com/twmb/franz-go/pkg/sasl"
	fplain "github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// interBrokerSASL is the franz-go mechanism this broker logs in to the
// others' inter-broker listener with (sasl.mechanism.inter.broker.protocol,
// with the username and password of that listener's JAAS config), or nil
// when the listener is not SASL_*. The follower fetchers drive it over
// kclient, the intra-cluster kgo clients through kgo.SASL; both
// re-authenticate when the listener sets connections.max.reauth.ms.
func (n *Node) interBrokerSASL() (fsasl.Mechanism, error) {
	ib := n.cfg.InterBrokerSASL
	if ib == nil {
		return nil, nil
	}
	switch ib.Mechanism {
	case "PLAIN":
		return fplain.Auth{User: ib.Username, Pass: ib.Password}.AsMechanism(), nil
	case "SCRAM-SHA-256":
		return scram.Auth{User: ib.Username, Pass: ib.Password}.AsSha256Mechanism(), nil
	case "SCRAM-SHA-512":
		return scram.Auth{User: ib.Username, Pass: ib.Password}.AsSha512Mechanism(), nil
	}
	return nil, fmt.Errorf("sasl.mechanism.inter.broker.protocol=%s: the inter-broker clients log in with PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", ib.Mechanism)
}

// interBrokerClientOpts are the options of an intra-cluster kgo client
// that reach the inter-broker listener: its dialer (TLS on SSL and
// SASL_SSL) and its SASL login.
func (n *Node) interBrokerClientOpts() []kgo.Opt {
	var opts []kgo.Opt
	if d := n.interBrokerDialer(); d != nil {
		opts = append(opts, kgo.Dialer(d))
	}
	if m, _ := n.interBrokerSASL(); m != nil { // an error stopped Start already
		opts = append(opts, kgo.SASL(m))
	}
	return opts
}
