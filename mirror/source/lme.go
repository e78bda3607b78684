package source

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/mirror/partition"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
	"github.com/strait-io/strait/storage"
)

// ErrLMEUnavailable: the source is a Strait cluster but no broker could
// answer for the partition's __mirror_state record yet (NOT_COORDINATOR,
// COORDINATOR_LOAD_IN_PROGRESS on every one). Retriable.
var ErrLMEUnavailable = errors.New("the source's last mirrored epoch is not available yet")

// LastMirroredEpoch asks the source what PREPARING needs (KIP-1279's log
// alignment): the last mirrored epoch (LME) the source recorded for the
// partition when it stopped mirroring it from this cluster (a failback),
// and the source's log start offset (ListOffsets EARLIEST), where a full
// truncation restarts the local log.
//
// The LME comes from ReadMirrorStates with MirrorName "" sent to every
// source broker: a Strait broker resolves the mirror from the topic's own
// mirror.name and answers from its __mirror_state coordinator, or
// NOT_COORDINATOR when another broker holds the record. The first answer
// without an error counts; it is an LME only when the record is STOPPED,
// or STOPPING with the LME recorded (LastMirrorOffset >= 0), and -1
// otherwise (no record, or a topic that was never a mirror topic there). A
// source that is not Strait (Apache Kafka, kfake) does not have the API and
// answers -1. Every Strait broker answering NOT_COORDINATOR or
// COORDINATOR_LOAD_IN_PROGRESS is ErrLMEUnavailable, to retry.
func (c *Cluster) LastMirroredEpoch(ctx context.Context, topic string, partition int32) (lme int32, logStart int64, err error) {
	tp := storage.TopicPartition{Topic: topic, Partition: partition}
	start, err := (&EndPoint{c: c}).FetchEarliestOffset(ctx, tp, -1)
	if err != nil {
		return -1, -1, fmt.Errorf("mirror source %s: log start offset of %s: %w", c.cfg.MirrorName, tp, err)
	}
	c.mu.Lock()
	brokers := make([]int32, 0, len(c.meta.brokers))
	for id := range c.meta.brokers {
		brokers = append(brokers, id)
	}
	c.mu.Unlock()
	slices.Sort(brokers)
	if len(brokers) == 0 {
		return -1, -1, fmt.Errorf("mirror source %s: no source broker known", c.cfg.MirrorName)
	}

	answers := make([]lmeAnswer, len(brokers))
	var wg sync.WaitGroup
	for i, id := range brokers {
		wg.Go(func() { answers[i] = c.readMirrorState(ctx, id, tp) })
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return -1, -1, err
	}
	var strait, unreachable, foreign int
	var firstErr error
	for _, a := range answers {
		switch a.kind {
		case lmeRecord:
			return a.lme, start.Offset, nil
		case lmeStraitError:
			strait++
		case lmeUnreachable:
			unreachable++
		case lmeForeign:
			foreign++
		}
		if a.err != nil && firstErr == nil {
			firstErr = a.err
		}
	}
	switch {
	case strait > 0:
		return -1, -1, fmt.Errorf("mirror source %s: %s: %w: %w", c.cfg.MirrorName, tp, ErrLMEUnavailable, firstErr)
	case foreign == 0:
		return -1, -1, fmt.Errorf("mirror source %s: ReadMirrorStates for %s reached no broker: %w", c.cfg.MirrorName, tp, firstErr)
	}
	c.logger.Debug("the source does not record mirror states; no last mirrored epoch", "partition", tp.String(),
		"brokers", len(brokers), "unreachable", unreachable)
	return -1, start.Offset, nil
}

type lmeKind int8

const (
	lmeRecord      lmeKind = iota + 1 // the broker answered for the record
	lmeStraitError                    // a Strait broker that cannot answer (not the coordinator, loading, ...)
	lmeUnreachable                    // no answer (network)
	lmeForeign                        // not a Strait broker: the API is unknown to it
)

type lmeAnswer struct {
	kind lmeKind
	lme  int32
	err  error
}

// readMirrorState asks one source broker for tp's record.
func (c *Cluster) readMirrorState(ctx context.Context, broker int32, tp storage.TopicPartition) lmeAnswer {
	req := mirrormsg.NewPtrReadMirrorStatesRequest()
	req.MirrorName = ""
	rt := mirrormsg.NewReadMirrorStatesRequestTopicData()
	rt.Name = tp.Topic
	rp := mirrormsg.NewReadMirrorStatesRequestPartitionData()
	rp.PartitionIndex = tp.Partition
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)

	kresp, err := c.cl.Broker(int(broker)).Request(ctx, req)
	if err != nil {
		if unsupportedAPI(err) {
			return lmeAnswer{kind: lmeForeign, err: err}
		}
		return lmeAnswer{kind: lmeUnreachable, err: fmt.Errorf("broker %d: %w", broker, err)}
	}
	resp, ok := kresp.(*mirrormsg.ReadMirrorStatesResponse)
	if !ok {
		return lmeAnswer{kind: lmeForeign, err: fmt.Errorf("broker %d: unexpected response %T", broker, kresp)}
	}
	if resp.ErrorCode != 0 {
		return codeAnswer(broker, resp.ErrorCode)
	}
	for _, t := range resp.Topics {
		if t.Name != tp.Topic {
			continue
		}
		for _, p := range t.Partitions {
			if p.PartitionIndex != tp.Partition {
				continue
			}
			if p.ErrorCode != 0 {
				return codeAnswer(broker, p.ErrorCode)
			}
			return lmeAnswer{kind: lmeRecord, lme: validLME(p)}
		}
	}
	return lmeAnswer{kind: lmeStraitError, err: fmt.Errorf("broker %d left %s out of its answer", broker, tp)}
}

// validLME is the record's LME when the record holds one: a stop completed
// (STOPPED) or got as far as recording it (STOPPING with LastMirrorOffset
// >= 0). Any other state's LastMirrorEpoch is not a failback point.
func validLME(p mirrormsg.ReadMirrorStatesResponsePartitionResult) int32 {
	switch partition.State(p.State) {
	case partition.StateStopped:
		return p.LastMirrorEpoch
	case partition.StateStopping:
		if p.LastMirrorOffset >= 0 {
			return p.LastMirrorEpoch
		}
	}
	return -1
}

func codeAnswer(broker int32, code int16) lmeAnswer {
	err := fmt.Errorf("broker %d: %w", broker, mirrormsg.ErrorForCode(code))
	if code == kerr.UnsupportedVersion.Code {
		return lmeAnswer{kind: lmeForeign, err: err}
	}
	return lmeAnswer{kind: lmeStraitError, err: err}
}

// unsupportedAPI reports whether kgo refused to send a request because the
// broker's ApiVersions lacks it (kgo's errors for it are not exported).
func unsupportedAPI(err error) bool {
	if errors.Is(err, kerr.UnsupportedVersion) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "broker is too old") || strings.Contains(msg, "request key is unknown")
}
