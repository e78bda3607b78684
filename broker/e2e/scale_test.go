package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestManyPartitionsWithinOpenFileLimit: a broker whose open-file limit
// is below three descriptors a partition holds scalePartitions
// partitions, each written to, restarts cleanly and serves every record.
// A partition's segment keeps its .log open, as Kafka's does; its
// indexes live in memory and open their files only to write them back,
// as Kafka's mmapped indexes hold no descriptor once mapped (issue 29:
// 10,000 partitions under an open-file limit of 20,000). Before, each
// loaded index kept its file open, three descriptors a partition, and
// the appends to the later partitions failed with EMFILE, which took the
// log directory offline.
func TestManyPartitionsWithinOpenFileLimit(t *testing.T) {
	const (
		limit           = 1024
		topics          = 50
		topicPartitions = 10
	)
	n := newNode(t)
	n.via = []string{prlimitBin(t), fmt.Sprintf("--nofile=%d:%d", limit, limit), "--"}
	p := n.start()
	adm := newAdmin(t, n.kafkaAddr())
	names := make([]string, topics)
	for i := range names {
		names[i] = fmt.Sprintf("many-%02d", i)
		createTopic(t, adm, names[i], topicPartitions)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := newClient(t, n.kafkaAddr(), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var recs []*kgo.Record
	for _, topic := range names {
		for part := range int32(topicPartitions) {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: part, Value: fmt.Appendf(nil, "%s-%d", topic, part)})
		}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce a record to each of %d partitions under an open-file limit of %d: %v\nstderr:\n%s",
			len(recs), limit, err, tail(p.stderr(), 3000))
	}
	if fds := openFDs(t, p.cmd.Process.Pid); fds >= limit {
		t.Fatalf("the broker has %d descriptors open of its %d", fds, limit)
	}
	if code, _ := n.term(); code != 0 {
		t.Fatalf("SIGTERM: exit code %d\nstderr:\n%s", code, tail(p.stderr(), 3000))
	}

	p = n.start()
	cons := newClient(t, n.kafkaAddr(), kgo.ConsumeTopics(names...), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	seen := map[string]bool{}
	for len(seen) < len(recs) && ctx.Err() == nil {
		fs := cons.PollFetches(ctx)
		fs.EachError(func(topic string, part int32, err error) {
			if ctx.Err() == nil {
				t.Errorf("fetch %s-%d after the restart: %v", topic, part, err)
			}
		})
		fs.EachRecord(func(r *kgo.Record) {
			if want := fmt.Sprintf("%s-%d", r.Topic, r.Partition); string(r.Value) != want || r.Offset != 0 {
				t.Errorf("%s-%d offset %d holds %q, want %q at offset 0", r.Topic, r.Partition, r.Offset, r.Value, want)
			}
			seen[string(r.Value)] = true
		})
	}
	if len(seen) != len(recs) {
		t.Fatalf("read %d of the %d records after the restart: %v\nstderr:\n%s", len(seen), len(recs), ctx.Err(), tail(p.stderr(), 3000))
	}
	if fds := openFDs(t, p.cmd.Process.Pid); fds >= limit {
		t.Fatalf("after the restart the broker has %d descriptors open of its %d", fds, limit)
	}
}

// TestCreatedPartitionsSurviveKill: a CreateTopics of 2,000 partitions
// answered, the broker is killed at once (SIGKILL, while it is still
// making the logs, which it now makes several at a time), and after the
// restart every partition is led, has its directory with the topic's id in
// partition.metadata, and takes a record at offset 0. What makes them
// survive is the metadata log (the controller answered once the topics
// were committed to it); the logs a killed process had made or half made
// are the kernel's and are opened, finished or made again at the start.
func TestCreatedPartitionsSurviveKill(t *testing.T) {
	const (
		topics          = 100
		topicPartitions = 20
	)
	n := newNode(t)
	p := n.start()
	adm := newAdmin(t, n.kafkaAddr())
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	names := make([]string, topics)
	for i := range names {
		names[i] = fmt.Sprintf("created-%03d", i)
	}
	resp, err := adm.CreateTopics(ctx, topicPartitions, 1, nil, names...)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, r := range resp.Sorted() {
		if r.Err != nil {
			t.Fatalf("create %s: %v", r.Topic, r.Err)
		}
		ids[r.Topic] = base64.RawURLEncoding.EncodeToString(r.ID[:]) // Kafka's Uuid.toString
	}
	n.kill()

	p = n.start()
	adm = newAdmin(t, n.kafkaAddr())
	for {
		md, err := adm.Metadata(ctx, names...)
		led := 0
		if err == nil {
			for _, td := range md.Topics {
				for _, pd := range td.Partitions {
					if pd.Err == nil && pd.Leader == 1 {
						led++
					}
				}
			}
		}
		if led == topics*topicPartitions {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("after the restart %d of %d partitions are led (%v)\nstderr:\n%s", led, topics*topicPartitions, err, tail(p.stderr(), 3000))
		}
		time.Sleep(50 * time.Millisecond)
	}
	cl := newClient(t, n.kafkaAddr(), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var recs []*kgo.Record
	for _, topic := range names {
		for part := range int32(topicPartitions) {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: part, Value: []byte("v")})
		}
	}
	for _, r := range cl.ProduceSync(ctx, recs...) {
		if r.Err != nil || r.Record.Offset != 0 {
			t.Fatalf("produce to %s-%d after the restart: offset %d, %v", r.Record.Topic, r.Record.Partition, r.Record.Offset, r.Err)
		}
	}
	// The first produce waited for nothing the background work owes, so
	// give partition.metadata a moment to be written where it was not.
	deadline := time.Now().Add(30 * time.Second)
	for _, topic := range names {
		for part := range topicPartitions {
			path := filepath.Join(n.logDir, fmt.Sprintf("%s-%d", topic, part), "partition.metadata")
			for {
				b, err := os.ReadFile(path)
				if err == nil && strings.Contains(string(b), "topic_id: "+ids[topic]) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s: %q, %v; want topic_id: %s", path, b, err, ids[topic])
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
	}
}
