package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/wire/rawconn"
)

// rawProducer sends hand-built idempotent batches, so a test can resend a
// batch exactly as a client retry would, sequence numbers and all, and
// read the broker's answer (Kafka's ProducerStateManager dedup rules).
type rawProducer struct {
	cl      *kgo.Client
	topic   string
	topicID [16]byte
	id      int64
	epoch   int16
}

// newRawProducer gets a producer id with InitProducerId (no transactional
// id) and the topic's id for Produce v13+.
func newRawProducer(t testing.TB, addr, topic string) *rawProducer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl := newClient(t, addr)
	init := kmsg.NewPtrInitProducerIDRequest()
	init.TransactionTimeoutMillis = -1
	resp, err := init.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("InitProducerId: %v", err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		t.Fatalf("InitProducerId: %v", err)
	}
	p := &rawProducer{cl: cl, topic: topic, id: resp.ProducerID, epoch: resp.ProducerEpoch}
	p.topicID = topicID(t, cl, topic)
	return p
}

func topicID(t testing.TB, cl *kgo.Client, topic string) [16]byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, mt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("metadata of %s: %v %+v", topic, err, resp)
	}
	return resp.Topics[0].TopicID
}

// produced is the broker's answer to one batch.
type produced struct {
	err        error
	baseOffset int64
}

func (p produced) String() string { return fmt.Sprintf("{err=%v baseOffset=%d}", p.err, p.baseOffset) }

// send produces count records with sequences seq.. to partition 0 and
// returns the broker's answer.
func (p *rawProducer) send(t testing.TB, seq int32, count int) produced {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	recs := make([]record.Record, count)
	for i := range recs {
		v := []byte(fmt.Sprintf("seq%d", seq+int32(i)))
		recs[i] = record.Record{KeyLen: -1, Value: v, ValueLen: int32(len(v))}
	}
	batch, err := record.Build(record.BatchSpec{
		ProducerID: p.id, ProducerEpoch: p.epoch, BaseSequence: seq,
		BaseTimestamp: time.Now().UnixMilli(),
	}, recs, nil)
	if err != nil {
		t.Fatal(err)
	}
	req := rawconn.Produce(p.topic, 0, batch)
	req.Topics[0].TopicID = p.topicID
	resp, err := req.RequestWith(ctx, p.cl)
	if err != nil {
		t.Fatalf("produce seq %d: %v", seq, err)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("produce seq %d: answer %+v", seq, resp)
	}
	part := resp.Topics[0].Partitions[0]
	return produced{kerr.ErrorForCode(part.ErrorCode), part.BaseOffset}
}
