package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// E2EConfig is the end-to-end latency workload: records produced at Rate,
// each stamped with its send time in the first 8 bytes of its value, read by
// a consumer tailing the topic; latency is the read time minus the stamp.
// Producer and consumer share this process's monotonic clock, so no clock
// sync is involved. Kafka's tools/EndToEndLatency sends one record at a time
// and waits for it; a fixed rate instead keeps the broker batching as it
// would under load, and records queue behind slow ones as in production.
type E2EConfig struct {
	ProducerConfig
	Fetch FetchConfig

	Rate     float64 // records per second, > 0
	Records  int64   // stop after this many, or
	Duration time.Duration

	Label     string
	BrokerPID int
	Proc      *ProcReader
	Progress  io.Writer
	// Profile, when set, fetches the broker's profiles over the workload.
	Profile *Profiler
}

// stampBytes is the size of the send-time header in each value.
const stampBytes = 8

// RunE2E runs the workload; the Result's Latency is produce-to-consume.
func RunE2E(ctx context.Context, cfg E2EConfig) (Result, error) {
	cfg.fill()
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	if cfg.Rate <= 0 {
		return Result{}, errors.New("bench: e2e needs a rate > 0")
	}
	if cfg.RecordSize < stampBytes {
		return Result{}, fmt.Errorf("bench: e2e record size %d < %d (the send-time header)", cfg.RecordSize, stampBytes)
	}
	if cfg.Records <= 0 && cfg.Duration <= 0 {
		return Result{}, errors.New("bench: e2e needs records or a duration")
	}
	if _, err := EnsureTopic(ctx, cfg.seeds(), cfg.Topic, cfg.Partitions, cfg.ReplicationFactor); err != nil {
		return Result{}, err
	}
	base := time.Now()
	hist := NewHistogram()
	res, err := runTail(ctx, tailConfig{
		produce: ProduceConfig{
			ProducerConfig: cfg.ProducerConfig,
			Records:        cfg.Records,
			Duration:       cfg.Duration,
			Rate:           cfg.Rate,
			Label:          cfg.Label,
			workload:       "e2e-produce",
			// The stamp is when the record was due, so a stalled
			// producer's backlog counts against the broker, as with
			// produce latency at a fixed rate.
			valueFn: func(pool *valuePool, n int64, sent time.Time) []byte {
				v := make([]byte, cfg.RecordSize)
				copy(v, pool.value(n))
				binary.LittleEndian.PutUint64(v, uint64(sent.Sub(base)))
				return v
			},
		},
		fetch:     cfg.Fetch,
		workload:  "e2e",
		brokerPID: cfg.BrokerPID,
		proc:      cfg.Proc,
		progress:  cfg.Progress,
		profile:   cfg.Profile,
		each: func(rec *kgo.Record) {
			if len(rec.Value) < stampBytes {
				return
			}
			sent := time.Duration(binary.LittleEndian.Uint64(rec.Value))
			hist.RecordDuration(time.Since(base) - sent)
		},
	})
	res.Latency = summarize(hist)
	return res, err
}
