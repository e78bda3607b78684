package kit

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Streaming is the context of a command that runs until its input ends or
// the user stops it (`strait produce` reading a terminal, `strait consume`
// following a topic): ctx without the --timeout deadline, which bounds
// only the command's setup, ended instead by SIGINT or SIGTERM. Call stop
// when done.
func Streaming(ctx context.Context) (streaming context.Context, stop context.CancelFunc) {
	return signal.NotifyContext(context.WithoutCancel(ctx), os.Interrupt, syscall.SIGTERM)
}

// TopicPartitions are the partitions of each topic, sorted. A topic the
// cluster does not have is an error naming it (missing is that topic):
// `strait produce` and `strait consume` check first rather than wait out
// franz-go's retries of UNKNOWN_TOPIC_OR_PARTITION.
func (c *Ctx) TopicPartitions(ctx context.Context, topics ...string) (parts map[string][]int32, missing string, err error) {
	adm, err := c.Admin()
	if err != nil {
		return nil, "", err
	}
	details, err := adm.ListTopics(ctx, topics...)
	if err != nil {
		return nil, "", err
	}
	parts = make(map[string][]int32, len(topics))
	for _, t := range topics {
		d, ok := details[t]
		switch {
		case !ok:
			return nil, t, kerr.UnknownTopicOrPartition
		case d.Err != nil:
			return nil, t, d.Err
		}
		parts[t] = d.Partitions.Numbers()
	}
	return parts, "", nil
}
