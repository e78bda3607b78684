package producer

import (
	"fmt"
	"time"
)

// DefaultProducerIDExpiration is producer.id.expiration.ms's default,
// 86400000 ms (ProducerStateManagerConfig / KIP-854).
const DefaultProducerIDExpiration = 24 * time.Hour

// Config is ProducerStateManagerConfig.
type Config struct {
	// ProducerIDExpiration is producer.id.expiration.ms: how long after its
	// last write a producer without an ongoing transaction is forgotten.
	ProducerIDExpiration time.Duration
}

// DefaultConfig returns Kafka's defaults.
func DefaultConfig() Config {
	return Config{ProducerIDExpiration: DefaultProducerIDExpiration}
}

// Validate checks the config as Kafka's ConfigDef does (at least 1 ms).
func (c Config) Validate() error {
	if c.ProducerIDExpiration < time.Millisecond {
		return fmt.Errorf("%w: producer id expiration %v is below 1ms", ErrInvalidConfig, c.ProducerIDExpiration)
	}
	return nil
}
