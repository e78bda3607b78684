package kclient_test

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	fplain "github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/strait-io/strait/wire"
	"github.com/strait-io/strait/wire/kclient"
	"github.com/strait-io/strait/wire/sasl"
	"github.com/strait-io/strait/wire/sasl/plain"
)

type reauthCount struct {
	wire.NopMetrics
	reauth, failed atomic.Int32
}

func (m *reauthCount) Authenticated(_, _ string, reauth bool) {
	if reauth {
		m.reauth.Add(1)
	}
}
func (m *reauthCount) AuthenticationFailed(string, string, bool) { m.failed.Add(1) }

// TestSASLLoginAndReauthentication: kclient logs in with franz-go's PLAIN
// mechanism on a SASL listener and, given a session lifetime
// (connections.max.reauth.ms), re-authenticates on the connection before
// it ends instead of being cut off; a wrong password is
// SASL_AUTHENTICATION_FAILED.
func TestSASLLoginAndReauthentication(t *testing.T) {
	m := &reauthCount{}
	srv := wire.NewServer(wire.Config{Listeners: []wire.Listener{{
		Name: "SASL", Host: "127.0.0.1", SecurityProtocol: wire.SecurityProtocolSASLPlaintext,
		SASL: &wire.SASL{Mechanisms: []sasl.Mechanism{plain.New(map[string]string{"broker": "broker-secret"})}, MaxReauth: 1200 * time.Millisecond},
	}}, EventLoops: 1}, wire.Services{}, slog.New(slog.DiscardHandler), m)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := srv.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	addr := srv.Addrs()["SASL"]

	bad := kclient.New(kclient.Config{Addr: addr, SASL: fplain.Auth{User: "broker", Pass: "wrong"}.AsMechanism()})
	defer bad.Close()
	if _, err := bad.Request(ctx, kmsg.NewPtrApiVersionsRequest()); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("wrong password: %v", err)
	}

	cn := kclient.New(kclient.Config{Addr: addr, SASL: fplain.Auth{User: "broker", Pass: "broker-secret"}.AsMechanism()})
	defer cn.Close()
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = 3
		req.ClientSoftwareName, req.ClientSoftwareVersion = "strait", "1"
		if _, err := cn.Request(ctx, req); err != nil {
			t.Fatalf("request on the authenticated connection: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if m.reauth.Load() < 1 || m.failed.Load() != 1 {
		t.Fatalf("%d re-authentications and %d failures counted, want at least 1 and exactly 1 (the wrong password)", m.reauth.Load(), m.failed.Load())
	}
}
