package e2e

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// quotaWindow is replication.quota.window.size.seconds at its default.
// Kafka's replication quotas measure with SimpleRate, whose elapsed time is
// at least one window: a move's first window lets a whole window's worth of
// the throttle through at once (ReplicationQuotaManager records after the
// fetch and checks before the next one), and the rate holds from then on.
const quotaWindow = time.Second

// newReplicaGrowth is the growth of the partition directories of topic
// that a node did not hold when it began: what a reassignment copies to
// its new replicas (the copy and the records produced meanwhile).
type newReplicaGrowth struct {
	logDir string
	prefix string
	before map[string]bool
	at     []time.Time
	size   []int64
}

// watchNewReplicas notes the directories of topic in logDir now, so that
// sample counts only the ones created later.
func watchNewReplicas(logDir, topic string) (*newReplicaGrowth, error) {
	g := &newReplicaGrowth{logDir: logDir, prefix: topic + "-", before: map[string]bool{}}
	entries, err := os.ReadDir(logDir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), g.prefix) {
			g.before[e.Name()] = true
		}
	}
	return g, nil
}

// sample appends the new replicas' size now. A directory may vanish
// between listing and reading it (a replica deleted): it counts as empty.
func (g *newReplicaGrowth) sample() {
	size, _ := logBytes(g.logDir, func(name string) bool {
		return strings.HasPrefix(name, g.prefix) && !g.before[name]
	})
	g.at, g.size = append(g.at, time.Now()), append(g.size, size)
}

// settledRate is the rate at which the new replicas grew once the quota's
// first window had passed, until they held upTo of their final size (the
// copy has caught up by then; after it only the producer's records
// arrive): the least-squares slope of size over time, which averages out
// the steps a throttle makes. It also says over how long and how many
// samples; an error if too few samples fall in that span to tell.
func (g *newReplicaGrowth) settledRate(upTo float64) (rate float64, span time.Duration, n int, err error) {
	if len(g.size) == 0 || g.size[len(g.size)-1] == 0 {
		return 0, 0, 0, fmt.Errorf("no new replica grew (%d samples)", len(g.size))
	}
	first := 0
	for g.size[first+1] == 0 {
		first++
	}
	from := first
	for from < len(g.at) && g.at[from].Sub(g.at[first]) < quotaWindow {
		from++
	}
	limit := int64(upTo * float64(g.size[len(g.size)-1]))
	to := from
	for to < len(g.size) && g.size[to] < limit {
		to++
	}
	n = to - from
	if n < 10 {
		// Too short to see a throttle: say how fast it went (at least
		// this: from the last sample before the first byte).
		end := min(to, len(g.size)-1)
		took := g.at[end].Sub(g.at[first])
		return 0, 0, n, fmt.Errorf("the new replicas reached %.0f%% of %.1f MiB %v after the sample before the first byte (%d samples after the first %v): at least %.1f MiB/s",
			100*upTo, float64(g.size[len(g.size)-1])/(1<<20), took.Round(time.Millisecond), n, quotaWindow, float64(g.size[end])/(1<<20)/took.Seconds())
	}
	var st, sb, stt, stb float64
	for j := from; j < to; j++ {
		x, y := g.at[j].Sub(g.at[from]).Seconds(), float64(g.size[j])
		st, sb, stt, stb = st+x, sb+y, stt+x*x, stb+x*y
	}
	fn := float64(n)
	return (fn*stb - st*sb) / (fn*stt - st*st), g.at[to-1].Sub(g.at[from]), n, nil
}

// logBytes is the size of the .log files under the directories of dir
// whose names include accepts; one deleted meanwhile counts as empty.
func logBytes(dir string, include func(name string) bool) (int64, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, e := range entries {
		if !e.IsDir() || !include(e.Name()) {
			continue
		}
		err := filepath.WalkDir(filepath.Join(dir, e.Name()), func(_ string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(d.Name(), ".log") {
				return err
			}
			info, err := d.Info()
			if err == nil {
				total += info.Size()
			}
			return err
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return total, err
		}
	}
	return total, nil
}

// createAssigned creates topic with the replicas of each partition given
// (CreateTopics' manual assignment, the first replica the preferred
// leader).
func createAssigned(ctx context.Context, t *testing.T, cl *kgo.Client, topic string, assignment [][]int32) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 30000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, -1, -1
	for p, replicas := range assignment {
		a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		a.Partition, a.Replicas = int32(p), replicas
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err == nil {
		err = kerr.ErrorForCode(resp.Topics[0].ErrorCode)
	}
	if err != nil {
		t.Fatalf("create %s on %v: %v", topic, assignment, err)
	}
}
