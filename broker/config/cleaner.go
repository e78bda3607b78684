package config

import (
	"strconv"

	"github.com/strait-io/strait/storage"
)

// LogCleaner is the log cleaner's configuration (log.cleaner.backoff.ms,
// log.cleaner.dedupe.buffer.size, log.cleaner.io.buffer.load.factor), read
// from the static configuration, whose values were validated when it was
// loaded. The cleaner is always on, as in Kafka 4.0, where
// log.cleaner.enable is deprecated and ignored: the broker accepts the key
// and ignores it too.
func (c *Config) LogCleaner() storage.CleanerConfig {
	src := c.Sources(nil, nil)
	long := func(key string) int64 {
		v, _ := src.BrokerValue(key)
		n, _ := strconv.ParseInt(v, 10, 64)
		return n
	}
	lf, _ := src.BrokerValue("log.cleaner.io.buffer.load.factor")
	loadFactor, _ := strconv.ParseFloat(lf, 64)
	cc := storage.CleanerConfig{
		BackoffMs:        long("log.cleaner.backoff.ms"),
		DedupeBufferSize: long("log.cleaner.dedupe.buffer.size"),
		LoadFactor:       loadFactor,
	}
	if cc.BackoffMs == 0 {
		cc.BackoffMs = 1 // storage reads 0 as its default; Kafka's 0 means no rest
	}
	return cc
}
