package config

import (
	"strconv"

	"github.com/strait-io/strait/broker/configdef"
	"github.com/strait-io/strait/storage"
)

// LogCleaner is the log cleaner's configuration from the static
// configuration, whose values were validated when it was loaded.
func (c *Config) LogCleaner() storage.CleanerConfig {
	return LogCleanerFrom(c.Sources(nil, nil))
}

// LogCleanerFrom reads the cleaner's keys (log.cleaner.enable, threads,
// backoff.ms, dedupe.buffer.size, io.buffer.load.factor,
// io.max.bytes.per.second) from src, the static configuration with the
// dynamic broker configs over it: the broker calls it again whenever those
// change, as Kafka's LogCleaner.reconfigure. Values that do not parse
// (they were validated when set) read as the storage defaults.
func LogCleanerFrom(src configdef.Sources) storage.CleanerConfig {
	value := func(key string) string {
		v, _ := src.BrokerValue(key)
		return v
	}
	long := func(key string) int64 {
		n, _ := strconv.ParseInt(value(key), 10, 64)
		return n
	}
	double := func(key string) float64 {
		f, _ := strconv.ParseFloat(value(key), 64)
		return f
	}
	threads := long("log.cleaner.threads")
	cc := storage.CleanerConfig{
		// log.cleaner.threads=0 starts no cleaner thread in Kafka.
		Disable:             value("log.cleaner.enable") == "false" || threads <= 0,
		Threads:             int(threads),
		BackoffMs:           long("log.cleaner.backoff.ms"),
		DedupeBufferSize:    long("log.cleaner.dedupe.buffer.size"),
		LoadFactor:          double("log.cleaner.io.buffer.load.factor"),
		IoMaxBytesPerSecond: double("log.cleaner.io.max.bytes.per.second"),
	}
	if cc.BackoffMs == 0 {
		cc.BackoffMs = 1 // storage reads 0 as its default; Kafka's 0 means no rest
	}
	return cc
}
