package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestJBODMoveSurvivesKill: the binary serves two log directories; a
// replica moving between them (AlterReplicaLogDirs, held to 64 KiB/s by
// replica.alter.log.dirs.io.max.bytes.per.second) when the process is
// killed (SIGKILL) leaves its "-future" directory, which the next process
// finds and goes on filling (Kafka resumes the future replica at start-up);
// with the rate raised over AlterConfigs the move finishes and the
// partition holds every acknowledged record at its offset, in the new
// directory.
func TestJBODMoveSurvivesKill(t *testing.T) {
	base := t.TempDir()
	dirs := [2]string{filepath.Join(base, "d1"), filepath.Join(base, "d2")}
	n := newNode(t, "log.dirs="+dirs[0]+","+dirs[1], "replica.alter.log.dirs.io.max.bytes.per.second=65536")
	n.start()
	const topic = "jbod-kill"
	adm := newAdmin(t, n.kafkaAddr())
	createTopic(t, adm, topic, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	prod := newClient(t, n.kafkaAddr(), kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerBatchMaxBytes(64<<10))
	var rs []*kgo.Record
	for i := range 1000 {
		b := make([]byte, 500)
		_, _ = rand.Read(b)
		rs = append(rs, &kgo.Record{Value: fmt.Appendf(nil, "%d-%s", i, hex.EncodeToString(b))})
	}
	if err := prod.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	prod.Close()

	// where returns the current and future directories of the partition.
	where := func(adm *kadm.Client) (cur, fut string, futSize int64) {
		described, err := adm.DescribeBrokerLogDirs(ctx, 1, kadm.TopicsSet{topic: {0: {}}})
		if err != nil {
			t.Fatal(err)
		}
		described.EachPartition(func(p kadm.DescribedLogDirPartition) {
			if p.IsFuture {
				fut, futSize = p.Dir, p.Size
			} else {
				cur = p.Dir
			}
		})
		return cur, fut, futSize
	}
	from, _, _ := where(adm)
	to := dirs[0]
	if from == dirs[0] {
		to = dirs[1]
	}
	var req kadm.AlterReplicaLogDirsReq
	req.Add(to, kadm.TopicsSet{topic: {0: {}}})
	ar, err := adm.AlterBrokerReplicaLogDirs(ctx, 1, req)
	if err != nil {
		t.Fatal(err)
	}
	ar.Each(func(r kadm.AlterReplicaLogDirsResponse) {
		if r.Err != nil {
			t.Fatalf("moving %s[%d] to %s: %v", r.Topic, r.Partition, r.Dir, r.Err)
		}
	})
	for {
		if _, fut, size := where(adm); fut == to && size > 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the future replica never started filling")
		}
		time.Sleep(20 * time.Millisecond)
	}
	n.kill()
	if m, _ := filepath.Glob(filepath.Join(to, topic+"-0.*-future")); len(m) != 1 {
		t.Fatalf("after the kill %s holds %v, want one future directory", to, m)
	}

	n.start()
	adm = newAdmin(t, n.kafkaAddr())
	if cur, fut, _ := where(adm); cur != from || fut != to {
		t.Fatalf("after the restart the replica is in %q with a future in %q, want %q and %q", cur, fut, from, to)
	}
	alter := kadm.AlterConfig{Op: kadm.SetConfig, Name: "replica.alter.log.dirs.io.max.bytes.per.second", Value: kadm.StringPtr("1073741824")}
	if cr, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{alter}, 1); err != nil || cr[0].Err != nil {
		t.Fatalf("raising the copy rate: %v %v", err, cr)
	}
	for {
		if cur, fut, _ := where(adm); cur == to && fut == "" {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the move never finished")
		}
		time.Sleep(50 * time.Millisecond)
	}
	recs, ends := readAll(t, n.kafkaAddr(), topic)
	if len(recs) != len(rs) || ends[0] != int64(len(rs)) {
		t.Fatalf("after the move %s holds %d records (end %d), want %d", topic, len(recs), ends[0], len(rs))
	}
	for i, r := range recs {
		if r.offset != int64(i) || r.value != string(rs[i].Value) {
			t.Fatalf("record %d: offset %d value %.12q, want offset %d value %.12q", i, r.offset, r.value, i, rs[i].Value)
		}
	}
}
