package brokertest

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	kscram "github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/strait-io/strait/broker"
)

// ScramLogin drives franz-go's SCRAM client against the node's SCRAM
// mechanism (what a SASL listener of the node checks passwords with) and
// returns the authenticated principal, or the exchange's error: a login
// without a SASL listener.
func ScramLogin(n *broker.Node, mech kadm.ScramMechanism, user, pass string) (principal string, err error) {
	server, err := n.ScramMechanism(mech.String())
	if err != nil {
		return "", fmt.Errorf("the node's %s mechanism: %w", mech, err)
	}
	a := kscram.Auth{User: user, Pass: pass}
	cm := a.AsSha256Mechanism()
	if mech == kadm.ScramSha512 {
		cm = a.AsSha512Mechanism()
	}
	cs, tok, err := cm.Authenticate(context.Background(), "")
	if err != nil {
		return "", err
	}
	s := server.NewSession()
	for {
		reply, done, err := s.Step(tok)
		if err != nil {
			return "", err
		}
		cdone, next, err := cs.Challenge(reply)
		if err != nil {
			return "", err
		}
		if done && cdone {
			return s.Principal(), nil
		}
		tok = next
	}
}
