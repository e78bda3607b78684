package wire

import (
	"crypto/tls"
	"fmt"
)

// SetListenerTLS replaces the TLS configuration of the started SSL or
// SASL_SSL listener name, as Kafka's dynamic SSL update
// (DynamicListenerConfig, SslFactory.reconfigure) rotates a listener's
// keystore or truststore without a restart: the connections accepted
// after it handshake with c; the open ones keep the session they have.
func (s *Server) SetListenerTLS(name string, c *tls.Config) error {
	if c == nil {
		return fmt.Errorf("%w: listener %s: %v", ErrInvalidConfig, name, errTLSConfig)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.listeners {
		if l.cfg.Name != name {
			continue
		}
		if l.cfg.TLS == nil {
			return fmt.Errorf("%w: listener %s does not use TLS", ErrInvalidConfig, name)
		}
		l.tlsConfig.Store(c)
		return nil
	}
	return fmt.Errorf("%w: no listener %s", ErrInvalidConfig, name)
}
