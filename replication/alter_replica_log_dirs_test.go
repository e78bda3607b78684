package replication

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestAlterReplicaLogDirs: on a broker with one log directory a replica
// can only be "moved" to where it is (NONE at once); any other path is
// LOG_DIR_NOT_FOUND, a partition this broker does not host
// REPLICA_NOT_AVAILABLE, one nobody knows UNKNOWN_TOPIC_OR_PARTITION, and
// a topic whose future-log directory name would pass 255 bytes
// INVALID_TOPIC_EXCEPTION, as Kafka's ReplicaManager.alterReplicaLogDirs
// answers.
func TestAlterReplicaLogDirs(t *testing.T) {
	h := newHarness(t)
	h.createTopic("here", topicSpec{partitions: 2})
	h.createTopic("elsewhere", topicSpec{replicas: []int32{2}, leader: 2})
	long := strings.Repeat("x", 249)
	h.createTopic(long, topicSpec{})
	abs, err := filepath.Abs(h.dir)
	if err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrAlterReplicaLogDirsRequest()
	req.Version = 2
	add := func(dir, topic string, parts ...int32) {
		d := kmsg.NewAlterReplicaLogDirsRequestDir()
		d.Dir = dir
		rt := kmsg.NewAlterReplicaLogDirsRequestDirTopic()
		rt.Topic, rt.Partitions = topic, parts
		d.Topics = append(d.Topics, rt)
		req.Dirs = append(req.Dirs, d)
	}
	add(abs, "here", 0)
	add(abs+"-other", "here", 1)
	add(abs, "elsewhere", 0)
	add(abs, "nobody", 0)
	add(abs, long, 0)
	add("relative/dir", "here", 1) // named twice: the last one counts
	resp := h.rm.AlterReplicaLogDirs(context.Background(), req)
	got := map[string]int16{}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			got[rt.Topic+"/"+string(rune('0'+rp.Partition))] = rp.ErrorCode
		}
	}
	want := map[string]int16{
		"here/0":      0,
		"here/1":      kerr.LogDirNotFound.Code,
		"elsewhere/0": kerr.ReplicaNotAvailable.Code,
		"nobody/0":    kerr.UnknownTopicOrPartition.Code,
		long + "/0":   kerr.InvalidTopicException.Code,
	}
	if len(got) != len(want) {
		t.Fatalf("answers %v, want %v", got, want)
	}
	for k, code := range want {
		if got[k] != code {
			t.Errorf("%.20s: error %d, want %d", k, got[k], code)
		}
	}
	if resp.Topics[0].Topic != "elsewhere" {
		t.Errorf("topics not in name order: first %q", resp.Topics[0].Topic)
	}
}
