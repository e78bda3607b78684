package broker

import (
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/scramcred"
	"github.com/strait-io/strait/wire/sasl"
	"github.com/strait-io/strait/wire/sasl/scram"
)

// imageScramCredentials is sasl.ScramCredentials over the newest metadata
// image: the credentials of UserScramCredentialRecords, as Kafka's brokers
// serve SCRAM from their metadata cache's ScramImage. A credential altered
// anywhere in the cluster is used here as soon as this node applied it.
type imageScramCredentials struct {
	image func() *raftmeta.Image
}

// ScramCredential implements sasl.ScramCredentials.
func (c imageScramCredentials) ScramCredential(mechanism, user string) (sasl.ScramCredential, bool) {
	t := scramcred.MechanismType(mechanism)
	if t == scramcred.TypeUnknown {
		return sasl.ScramCredential{}, false
	}
	cred, ok := c.image().ScramCredential(t, user)
	if !ok {
		return sasl.ScramCredential{}, false
	}
	return sasl.ScramCredential{
		Salt:       cred.Salt,
		StoredKey:  cred.StoredKey,
		ServerKey:  cred.ServerKey,
		Iterations: int(cred.Iterations),
	}, true
}

// scramMechanism is the SASL mechanism name ("SCRAM-SHA-256" or
// "SCRAM-SHA-512") of a listener's sasl.enabled.mechanisms, checking
// passwords against the credentials image returns (the node's quorum
// Image).
func scramMechanism(name string, image func() *raftmeta.Image) (sasl.Mechanism, error) {
	return scram.NewMechanism(name, imageScramCredentials{image: image}, nil)
}

// ScramMechanism is the SCRAM mechanism ("SCRAM-SHA-256" or
// "SCRAM-SHA-512") a SASL listener of this node checks passwords with:
// what a test drives to log in as a user until SASL listeners exist.
func (n *Node) ScramMechanism(name string) (sasl.Mechanism, error) {
	return scramMechanism(name, n.quorum.Image)
}
