package group

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/cmd/strait/ctl/ctltest"
)

func TestMain(m *testing.M) { os.Exit(ctltest.Main(m)) }

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func client(t *testing.T, tg ctltest.Target, opts ...kgo.Opt) *kgo.Client {
	return ctltest.KgoClient(t, tg, opts...)
}

func admin(t *testing.T, tg ctltest.Target) *kadm.Client { return kadm.NewClient(client(t, tg)) }

// produce writes counts[p] records to each partition p of a new topic;
// record i of a partition has the timestamp base+i s.
func produce(t *testing.T, tg ctltest.Target, topic string, base time.Time, counts ...int) {
	t.Helper()
	ctx := testCtx(t)
	adm := admin(t, tg)
	if _, err := adm.CreateTopic(ctx, int32(len(counts)), 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	cl := client(t, tg, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var rs []*kgo.Record
	for p, n := range counts {
		for i := range n {
			rs = append(rs, &kgo.Record{Topic: topic, Partition: int32(p), Value: []byte("v"), Timestamp: base.Add(time.Duration(i) * time.Second)})
		}
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// adminCommit commits offsets for group with no member, making an Empty
// group as a consumer that has gone away leaves it.
func adminCommit(t *testing.T, tg ctltest.Target, group, topic string, offsets map[int32]int64) {
	t.Helper()
	os := make(kadm.Offsets)
	for p, o := range offsets {
		os.Add(kadm.Offset{Topic: topic, Partition: p, At: o, LeaderEpoch: -1})
	}
	if err := admin(t, tg).CommitAllOffsets(testCtx(t), group, os); err != nil {
		t.Fatal(err)
	}
}

// commits are group's committed offsets on topic (absent: none).
func commits(t *testing.T, tg ctltest.Target, group, topic string) map[int32]int64 {
	t.Helper()
	resp, err := admin(t, tg).FetchOffsets(testCtx(t), group)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]int64{}
	for p, o := range resp[topic] {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		if o.At >= 0 {
			out[p] = o.At
		}
	}
	return out
}

// activeMember joins group (a KIP-848 consumer group if serverSide, else
// a classic one) on topic as clientID, waits for its assignment and
// commits offsets; it stays in the group until the test ends.
func activeMember(t *testing.T, tg ctltest.Target, group, topic, clientID string, serverSide bool, offsets map[int32]int64) *kgo.Client {
	t.Helper()
	ctx := testCtx(t)
	assigned := make(chan struct{}, 1)
	opts := []kgo.Opt{kgo.ClientID(clientID), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit(),
		kgo.FetchMaxWait(100 * time.Millisecond),
		kgo.OnPartitionsAssigned(func(context.Context, *kgo.Client, map[string][]int32) {
			select {
			case assigned <- struct{}{}:
			default:
			}
		})}
	if serverSide {
		opts = append(opts, kgo.ServerSideBalancer())
	}
	cl := client(t, tg, opts...)
	go func() {
		for ctx.Err() == nil && !cl.PollFetches(ctx).IsClientClosed() {
		}
	}()
	select {
	case <-assigned:
	case <-ctx.Done():
		t.Fatalf("%s never assigned in %s", clientID, group)
	}
	eo := map[int32]kgo.EpochOffset{}
	for p, o := range offsets {
		eo[p] = kgo.EpochOffset{Epoch: -1, Offset: o}
	}
	for {
		var cerr error
		cl.CommitOffsetsSync(ctx, map[string]map[int32]kgo.EpochOffset{topic: eo}, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
			cerr = err
			if err == nil {
				for _, rt := range resp.Topics {
					for _, rp := range rt.Partitions {
						if rp.ErrorCode != 0 && cerr == nil {
							cerr = kerr.ErrorForCode(rp.ErrorCode)
						}
					}
				}
			}
		})
		if cerr == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("%s commit: %v", clientID, cerr)
		}
		time.Sleep(100 * time.Millisecond) // a rebalance in progress refuses it; commit again
	}
	waitState(t, tg, group, "Stable")
	return cl
}

// waitState waits until group is in state (its type's describe API).
func waitState(t *testing.T, tg ctltest.Target, group, state string) {
	t.Helper()
	ctx := testCtx(t)
	cl := client(t, tg)
	for {
		d := describeGroups(ctx, cl, []string{group})[group]
		if d.Err == nil && d.State == state {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("group %s never %s: %+v", group, state, d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// decode decodes r's --json stdout into v.
func decode(t *testing.T, r ctltest.Result, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(r.Stdout), v); err != nil {
		t.Fatalf("%v\n%s", err, r)
	}
}

// oneLine checks a failed run: exit code and exactly one line on stderr
// containing each of want.
func oneLine(t *testing.T, r ctltest.Result, code int, want ...string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
	if r.Code != code || (code == 1 && len(lines) != 1) {
		t.Fatalf("want exit %d and one line on stderr\n%s", code, r)
	}
	for _, w := range want {
		if !strings.Contains(lines[0], w) {
			t.Fatalf("stderr's first line does not say %q\n%s", w, r)
		}
	}
}
