package topic

import (
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"math"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/cmd/strait/ctl/kit"
)

type createFlags struct {
	partitions, replicas int
	configs              kit.KeyValues
	dryRun, ifNotExists  bool
}

// Check refuses counts CreateTopics would: -1 asks for the cluster's
// default (num.partitions, default.replication.factor; KIP-464).
func (f *createFlags) Check() error {
	if f.partitions == 0 || f.partitions < -1 || f.partitions > math.MaxInt32 {
		return fmt.Errorf("--partitions must be positive, or -1 for the cluster's default; got %d", f.partitions)
	}
	if f.replicas == 0 || f.replicas < -1 || f.replicas > math.MaxInt16 {
		return fmt.Errorf("--replicas must be positive, or -1 for the cluster's default; got %d", f.replicas)
	}
	return nil
}

func createCommand() *kit.Command {
	return &kit.Command{
		Name:    "create",
		Args:    "TOPIC... [-p N] [-r N] [-c key=value]... [--dry-run] [--if-not-exists]",
		Summary: "create topics (partitions and replicas default to the cluster's)",
		Examples: []string{
			"strait topic create orders",
			"strait topic create orders payments -p 6 -r 3 -c cleanup.policy=compact -c retention.ms=86400000",
			"strait topic create orders --dry-run    # only validate",
		},
		MinArgs: 1, MaxArgs: -1,
		Flags: func(fs *flag.FlagSet) any {
			f := &createFlags{}
			fs.IntVar(&f.partitions, "partitions", -1, "partitions per topic, `N` (-1: the cluster's num.partitions)")
			short(fs, "partitions", "p")
			fs.IntVar(&f.replicas, "replicas", -1, "replication factor `N` (-1: the cluster's default.replication.factor)")
			short(fs, "replicas", "r")
			fs.Var(&f.configs, "topic-config", "a topic config, `key=value` (repeatable)")
			short(fs, "topic-config", "c")
			fs.BoolVar(&f.dryRun, "dry-run", false, "validate the request only (CreateTopics validate_only)")
			short(fs, "dry-run", "d")
			fs.BoolVar(&f.ifNotExists, "if-not-exists", false, "a topic that exists already is not an error")
			return f
		},
		Run: runCreate,
	}
}

// created is one topic's outcome in --json.
type created struct {
	Topic             string `json:"topic"`
	TopicID           string `json:"topic_id"`
	Partitions        int32  `json:"partitions"`
	ReplicationFactor int16  `json:"replication_factor"`
	// Status is OK, VALID (--dry-run), EXISTS (--if-not-exists) or FAILED.
	Status string `json:"status"`
	Error  string `json:"error"`
}

func runCreate(ctx context.Context, c *kit.Ctx, topics []string, flags any) int {
	f := flags.(*createFlags)
	adm, err := c.Admin()
	if err != nil {
		return c.Fail(err)
	}
	configs := map[string]*string{}
	for k, v := range f.configs.Map() {
		configs[k] = kadm.StringPtr(v)
	}
	create := adm.CreateTopics
	if f.dryRun {
		create = adm.ValidateCreateTopics
	}
	resps, err := create(ctx, int32(f.partitions), int16(f.replicas), configs, topics...)
	if err != nil {
		return c.Fail(err)
	}
	var (
		all    []created
		failed []failure
		t      = table{headers: []string{"TOPIC", "ID", "PARTITIONS", "REPLICAS", "STATUS"}}
	)
	for _, name := range uniqueSorted(topics) {
		r, ok := resps[name]
		if !ok {
			r = kadm.CreateTopicResponse{Topic: name, Err: noAnswer("topic " + name)}
		}
		out := created{Topic: name, TopicID: topicID(r.ID), Partitions: r.NumPartitions, ReplicationFactor: r.ReplicationFactor, Status: "OK"}
		switch {
		case f.ifNotExists && errors.Is(r.Err, kerr.TopicAlreadyExists):
			out.Status = "EXISTS"
		case r.Err != nil:
			out.Status, out.Error = "FAILED", reason(c, r.Err, r.ErrMessage)
			failed = append(failed, failure{name, out.Error})
		case f.dryRun:
			out.Status = "VALID"
		}
		all = append(all, out)
		if out.Error == "" {
			t.add(name, out.TopicID, count(int64(r.NumPartitions)), count(int64(r.ReplicationFactor)), out.Status)
		}
	}
	return finish(c, all, &t, failed)
}

// topicID is a topic ID as Kafka prints it (Uuid.toString: URL-safe
// base64 without padding), "" for none (a dry run, or a cluster without
// topic IDs).
func topicID(id kadm.TopicID) string {
	if id == (kadm.TopicID{}) {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString(id[:])
}

// count is a count for a table cell: "" (printed "-") when the cluster did
// not say (CreateTopics before v5 carries no counts).
func count(n int64) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprint(n)
}

func uniqueSorted(names []string) []string {
	s := slices.Clone(names)
	slices.Sort(s)
	return slices.Compact(s)
}
