package kclient

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// authenticate logs in on nc with the configured franz-go mechanism, as
// Kafka's SaslClientAuthenticator does after ApiVersions: SaslHandshake
// v1, then SaslAuthenticate requests carrying the mechanism's messages
// until it is done. When the broker gives the session a lifetime
// (KIP-368), the next request past 90% of it re-authenticates first
// (reauthDue). reqMu is held.
func (c *Conn) authenticate(ctx context.Context, nc net.Conn) error {
	mech := c.cfg.SASL
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version = 1
	hs.Mechanism = mech.Name()
	if err := c.negotiate(hs); err != nil {
		return err
	}
	kresp, err := c.roundTrip(ctx, nc, hs, c.cfg.Timeout)
	if err != nil {
		return err
	}
	if resp := kresp.(*kmsg.SASLHandshakeResponse); resp.ErrorCode != 0 {
		return fmt.Errorf("SaslHandshake %s (the broker enables %v): %w", mech.Name(), resp.SupportedMechanisms, kerr.ErrorForCode(resp.ErrorCode))
	}
	host, _, _ := net.SplitHostPort(c.cfg.Addr)
	session, msg, err := mech.Authenticate(ctx, host)
	if err != nil {
		return fmt.Errorf("SASL %s: %w", mech.Name(), err)
	}
	start := time.Now()
	for done := false; !done; {
		req := kmsg.NewPtrSASLAuthenticateRequest()
		req.Version = 2
		req.SASLAuthBytes = msg
		if err := c.negotiate(req); err != nil {
			return err
		}
		kresp, err := c.roundTrip(ctx, nc, req, c.cfg.Timeout)
		if err != nil {
			return err
		}
		resp := kresp.(*kmsg.SASLAuthenticateResponse)
		if resp.ErrorCode != 0 {
			err := kerr.ErrorForCode(resp.ErrorCode)
			if resp.ErrorMessage != nil {
				return fmt.Errorf("SASL %s: %s: %w", mech.Name(), *resp.ErrorMessage, err)
			}
			return fmt.Errorf("SASL %s: %w", mech.Name(), err)
		}
		if done, msg, err = session.Challenge(resp.SASLAuthBytes); err != nil {
			return fmt.Errorf("SASL %s: %w", mech.Name(), err)
		}
		c.reauthAt = time.Time{}
		if life := time.Duration(resp.SessionLifetimeMillis) * time.Millisecond; life > 0 {
			c.reauthAt = start.Add(life - life/10)
		}
	}
	return nil
}

// reauthDue reports whether the session must be renewed before the next
// request. reqMu is held.
func (c *Conn) reauthDue() bool { return !c.reauthAt.IsZero() && !time.Now().Before(c.reauthAt) }
