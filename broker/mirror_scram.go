package broker

import (
	"context"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// DescribeScramCredentialSecrets answers from this broker's image, as
// DescribeUserScramCredentials does; the wire server has already refused
// a request that came on an unencrypted listener.
func (s mirrorService) DescribeScramCredentialSecrets(_ context.Context, req *mirrormsg.DescribeScramCredentialSecretsRequest) *mirrormsg.DescribeScramCredentialSecretsResponse {
	return raftmeta.DescribeScramCredentialSecrets(s.n.quorum.Image(), req)
}
