// Package topic is `strait topic`: create, list, describe, delete,
// alter-config, add-partitions and trim-prefix, with the flags and output
// columns of rpk's `rpk topic` and the semantics of Kafka's own Admin API
// (CreateTopics, Metadata, DescribeConfigs, DeleteTopics,
// IncrementalAlterConfigs, CreatePartitions, DeleteRecords), so it works
// against any Kafka-compatible cluster.
package topic

import "github.com/strait-io/strait/cmd/strait/ctl/kit"

// Group is `strait topic`.
func Group() *kit.Group {
	return &kit.Group{
		Name:    "topic",
		Summary: "create, list, describe, delete and change topics",
		Help: `A command acting on several topics prints a row for each topic it acted on and
one line on stderr for each it could not ("strait topic delete: orders:
UNKNOWN_TOPIC_OR_PARTITION: ..."); it exits 1 if any failed. --json prints every
topic with an "error" field ("" when it succeeded).`,
		Commands: []*kit.Command{
			createCommand(),
			listCommand(),
			describeCommand(),
			deleteCommand(),
			alterConfigCommand(),
			addPartitionsCommand(),
			trimPrefixCommand(),
		},
	}
}
