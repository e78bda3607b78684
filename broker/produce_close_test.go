package broker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
)

// TestAcksZeroProduceSurvivesClose: an acks=0 producer that flushes and
// closes at once has every record stored. Its produce requests are read
// but may still wait their turn when the connection closes; Kafka's
// handlers process every request read and drop only the answer, so the
// records land. Strait dropped the waiting ones (`strait produce --acks 0`
// lost records when it exited right after sending).
func TestAcksZeroProduceSurvivesClose(t *testing.T) {
	b := brokertest.Start(t)
	const topic = "acks0-close"
	createTopic(t, b.Admin(t), topic, 1)
	total := 0
	for round := range 5 {
		const n = 400
		cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.DefaultProduceTopic(topic),
			kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite(),
			kgo.ProducerLinger(0), kgo.MaxBufferedRecords(1), // one record per request: many requests in flight
			kgo.MaxProduceRequestsInflightPerBroker(5))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		for i := range n {
			cl.Produce(ctx, kgo.StringRecord(fmt.Sprintf("r%d-%d", round, i)), nil)
		}
		if err := cl.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		cl.Close() // at once: requests may still wait their turn on the broker
		cancel()
		total += n
	}
	got := consumeN(t, b, total, []string{topic})
	if len(got) != total {
		t.Fatalf("stored %d of %d acks=0 records sent before the producers closed", len(got), total)
	}
}
