package bench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// scaleStopWait bounds a clean shutdown: SIGTERM to exit, flushing every
// partition.
const scaleStopWait = time.Minute

// scaleStartWait bounds a restart: exec to every partition led.
const scaleStartWait = 2 * time.Minute

// topicNames are a step's topics: prefix-00000, prefix-00001, ...
func (c *ScaleConfig) topicNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%05d", c.Topic, i)
	}
	return out
}

// straitNode starts one fresh `strait serve` in dir and waits for its
// ready line.
func (c *ScaleConfig) straitNode(ctx context.Context, dir string) (*serveCluster, error) {
	specs, err := nodeSpecs(dir, 1)
	if err != nil {
		return nil, err
	}
	return startCluster(ctx, c.ServeCommand, specs, c.Sets)
}

// produceP8 is the broker's run to a topic of 8 partitions, the
// denominator of the step's ratio.
func (c *ScaleConfig) produceP8(ctx context.Context, b *Broker) (*Result, error) {
	pc := c.ProducerConfig
	pc.Bootstrap, pc.TLS, pc.Topic, pc.Partitions = b.Addrs, b.TLS, c.Topic+"-p8", 8
	res, err := RunProduce(ctx, ProduceConfig{
		ProducerConfig: pc, Duration: c.ProduceDuration, Label: b.Label, BrokerPID: b.PID,
		Proc: c.Proc, Progress: c.Progress, workload: "produce-p8",
	})
	return &res, err
}

// straitStep measures one step on a fresh Strait node, then stops it
// with SIGTERM and measures its restart.
func (c *ScaleConfig) straitStep(ctx context.Context, dir string, st ScaleStep, f *ScaleFigures) error {
	node, err := c.straitNode(ctx, dir)
	if err != nil {
		return err
	}
	defer func() { node.stop() }()
	b := &Broker{Label: "strait", Addrs: node.addrs(), PID: node.pids()[0]}
	topics := c.topicNames(st.Topics)
	if err := c.measure(ctx, b, st, topics, f, dir); err != nil {
		return err
	}
	before, err := allEndOffsets(ctx, b.Addrs, topics)
	if err != nil {
		return err
	}
	// The produce phase's dirty pages are written back first, so the
	// shutdown's time is the broker's own flush, not the disk catching up.
	if err := settleWriteback(dir, c.Progress); err != nil {
		return err
	}
	stopped := time.Now()
	killed := node.stopWithin(scaleStopWait)
	f.ShutdownTook = time.Since(stopped)
	if killed {
		return fmt.Errorf("bench: node not stopped %v after SIGTERM: killed, so its restart is no clean one", scaleStopWait)
	}

	spec := node.nodes[0].spec
	spec.logFile = strings.TrimSuffix(spec.logFile, ".log") + "-restart.log"
	started := time.Now()
	n, err := startServe(c.ServeCommand, spec, c.Sets)
	if err != nil {
		return err
	}
	node = &serveCluster{nodes: []*serveNode{n}}
	wait, cancel := context.WithTimeout(ctx, scaleStartWait)
	defer cancel()
	if err := waitLed(wait, n, topics[0]); err != nil {
		return err
	}
	f.StartupTook = time.Since(started)
	if err := n.waitReady(ctx, time.After(nodeStartWait)); err != nil {
		return err
	}
	f.StartupLogged = logField(n.readyText, "startup")
	c.progressf("strait p=%d: restart answered in %s (logged startup=%s), shutdown took %s",
		st.Partitions, fmtDur(f.StartupTook), f.StartupLogged, fmtDur(f.ShutdownTook))
	time.Sleep(c.Settle)
	if f.RestartRSS, f.RestartFDs, err = c.idle(n.cmd.Process.Pid); err != nil {
		return err
	}
	after, err := allEndOffsets(ctx, b.Addrs, topics)
	if err != nil {
		return err
	}
	if diff := offsetsDiffer(before, after); diff != "" {
		return fmt.Errorf("bench: after the restart %s", diff)
	}
	f.RestartOffsetsOK = true
	return nil
}

// peerStep measures one step on a fresh kfake.
func (c *ScaleConfig) peerStep(ctx context.Context, st ScaleStep, f *ScaleFigures) error {
	b, err := c.StartPeer(ctx)
	if err != nil {
		return err
	}
	defer b.Close()
	return c.measure(ctx, b, st, c.topicNames(st.Topics), f, "")
}

// measure is the part of a step both brokers run: create the topics,
// prefill every partition, then the idle, Metadata, connection and
// produce figures. dir is the broker's data directory, "" for kfake.
func (c *ScaleConfig) measure(ctx context.Context, b *Broker, st ScaleStep, topics []string, f *ScaleFigures, dir string) error {
	var err error
	if f.CreateTook, err = c.createTopics(ctx, b, topics); err != nil {
		return err
	}
	c.progressf("%s p=%d: created %d topics in %s", b.Label, st.Partitions, len(topics), fmtDur(f.CreateTook))
	if _, err := c.produceAll(ctx, b, topics, "prefill"); err != nil {
		return err
	}
	time.Sleep(c.Settle)
	if f.IdleRSS, f.IdleFDs, err = c.idle(b.PID); err != nil {
		return err
	}
	if f.MetadataAll, f.MetadataOne, err = c.metadataLatency(ctx, b, topics[0]); err != nil {
		return err
	}
	c.progressf("%s p=%d: idle rss %.0f MiB, %d fds; Metadata p99 all %s, one %s", b.Label, st.Partitions,
		float64(f.IdleRSS)/mib, f.IdleFDs, fmtDur(f.MetadataAll.P99), fmtDur(f.MetadataOne.P99))
	if f.ConnRSS, f.ConnFDs, err = c.connections(ctx, b, topics); err != nil {
		return err
	}
	c.progressf("%s p=%d: %d connections: rss %.0f MiB, %d fds", b.Label, st.Partitions, c.Connections, float64(f.ConnRSS)/mib, f.ConnFDs)
	// Each produce run starts with the previous phase's dirty pages
	// written back, so the run to every partition does not pay for the
	// 8-partition run's writeback (as bench cluster's phases).
	settle := func() error {
		if dir == "" {
			return nil
		}
		return settleWriteback(dir, c.Progress)
	}
	if err := settle(); err != nil {
		return err
	}
	if f.P8, err = c.produceP8(ctx, b); err != nil {
		return err
	}
	if err := settle(); err != nil {
		return err
	}
	res, err := c.produceAll(ctx, b, topics, "produce-all")
	f.Produce = &res
	f.Ratio = div(res.MiBPerSec, f.P8.MiBPerSec)
	c.progressf("%s p=%d: produce to all %.1f MiB/s, to 8 partitions %.1f MiB/s (%.2f)", b.Label, st.Partitions,
		res.MiBPerSec, f.P8.MiBPerSec, f.Ratio)
	return err
}

// idle reads the broker's resident memory and open file descriptors.
func (c *ScaleConfig) idle(pid int) (rss int64, fds int, err error) {
	if pid == 0 {
		return 0, 0, nil
	}
	r := c.Proc
	if r == nil {
		r = NewProcReader()
	}
	s, err := r.Read(pid)
	if err != nil {
		return 0, 0, err
	}
	fds, err = r.FDs(pid)
	return s.RSSBytes, fds, err
}

// createTopics creates the topics, TopicPartitions each, in CreateTopics
// requests of 100 topics, and waits until Metadata shows every partition
// led: the time from the first request until a producer can use them all.
func (c *ScaleConfig) createTopics(ctx context.Context, b *Broker, topics []string) (time.Duration, error) {
	cl, err := kgo.NewClient(seedOpts(b.Addrs, b.TLS)...)
	if err != nil {
		return 0, fmt.Errorf("bench: admin client: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	start := time.Now()
	for i := 0; i < len(topics); i += 100 {
		resp, err := adm.CreateTopics(ctx, int32(c.TopicPartitions), c.ReplicationFactor, nil, topics[i:min(i+100, len(topics))]...)
		if err != nil {
			return 0, fmt.Errorf("bench: create topics: %w", err)
		}
		if err := resp.Error(); err != nil {
			return 0, fmt.Errorf("bench: create topics: %w", err)
		}
	}
	wait, cancel := context.WithTimeout(ctx, scaleStartWait)
	defer cancel()
	err = poll(wait, func() (bool, error) {
		md, err := adm.Metadata(wait, topics...)
		if err != nil {
			return false, nil
		}
		return allLed(md.Topics, topics, c.TopicPartitions), nil
	})
	if err != nil {
		return 0, fmt.Errorf("bench: %d topics not all led: %w", len(topics), err)
	}
	return time.Since(start), nil
}

// allLed says whether every one of topics has want partitions, each with
// a leader.
func allLed(md kadm.TopicDetails, topics []string, want int) bool {
	for _, t := range topics {
		td, ok := md[t]
		if !ok || td.Err != nil || len(td.Partitions) != want {
			return false
		}
		for _, p := range td.Partitions {
			if p.Err != nil || p.Leader < 0 {
				return false
			}
		}
	}
	return true
}

// produceAll produces to every partition of topics. The prefill writes
// PrefillRecords records to each, one partition after the other; the
// measured run sends each partition a batch's worth of records in turn,
// so every batch is full, as on the other produce rows.
func (c *ScaleConfig) produceAll(ctx context.Context, b *Broker, topics []string, workload string) (Result, error) {
	parts := int64(len(topics) * c.TopicPartitions)
	pc := c.ProducerConfig
	pc.Bootstrap, pc.TLS, pc.Topic = b.Addrs, b.TLS, topics[0]
	cfg := ProduceConfig{ProducerConfig: pc, Label: b.Label, workload: workload}
	perBatch := int64(max(1, (int(c.BatchBytes)-batchOverhead)/(c.RecordSize+recordOverhead)))
	tp := int64(c.TopicPartitions)
	if workload == "prefill" {
		cfg.Records = parts * int64(c.PrefillRecords)
		cfg.place = func(n int64, r *kgo.Record) {
			i := n % parts
			r.Topic, r.Partition = topics[i/tp], int32(i%tp)
		}
	} else {
		cfg.Duration = c.ProduceDuration
		cfg.BrokerPID, cfg.Proc, cfg.Progress = b.PID, c.Proc, c.Progress
		cfg.place = func(n int64, r *kgo.Record) {
			i := (n / perBatch) % parts
			r.Topic, r.Partition = topics[i/tp], int32(i%tp)
		}
	}
	return RunProduce(ctx, cfg)
}

// A v2 record batch's header is 61 bytes; a record of a small value
// without key or headers adds about 10 bytes to it.
const (
	batchOverhead  = 61
	recordOverhead = 16
)

// allEndOffsets lists every partition's end offset.
func allEndOffsets(ctx context.Context, addrs []string, topics []string) (map[string]int64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...))
	if err != nil {
		return nil, fmt.Errorf("bench: admin client: %w", err)
	}
	defer cl.Close()
	lo, err := kadm.NewClient(cl).ListEndOffsets(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("bench: list end offsets: %w", err)
	}
	out := map[string]int64{}
	var first error
	lo.Each(func(o kadm.ListedOffset) {
		if o.Err != nil && first == nil {
			first = fmt.Errorf("bench: end offset of %s-%d: %w", o.Topic, o.Partition, o.Err)
		}
		out[fmt.Sprintf("%s-%d", o.Topic, o.Partition)] = o.Offset
	})
	return out, first
}

// offsetsDiffer names the first partition whose end offset changed, "" when
// none did.
func offsetsDiffer(before, after map[string]int64) string {
	for p, o := range before {
		if a, ok := after[p]; !ok || a != o {
			return fmt.Sprintf("partition %s ends at %d, before it ended at %d (%d partitions)", p, a, o, len(before))
		}
	}
	if len(after) != len(before) {
		return fmt.Sprintf("%d partitions, before %d", len(after), len(before))
	}
	return ""
}

// logField is the value of key=value in a logfmt line, "" when absent.
func logField(line, key string) string {
	for f := range strings.FieldsSeq(line) {
		if v, ok := strings.CutPrefix(f, key+"="); ok {
			return v
		}
	}
	return ""
}
