package scram

import (
	"context"

	ksasl "github.com/twmb/franz-go/pkg/sasl"
)

type kclientSession = ksasl.Session

// wrap narrows franz-go's sasl.Mechanism to what the tests call.
type wrap struct{ m ksasl.Mechanism }

func (w wrap) Authenticate(ctx context.Context, host string) (kclientSession, []byte, error) {
	return w.m.Authenticate(ctx, host)
}
