// Package configdef defines every broker and topic configuration key Strait
// knows: its type, default, validator, documentation, whether it can be
// changed at runtime, and which broker keys stand in for a topic key when
// the topic does not override it. Config file parsing (broker/config), the
// controller's topic config validation and DescribeConfigs all read these
// definitions, so a key means the same thing everywhere.
//
// The definitions follow Apache Kafka 4.x: TopicConfig / LogConfig for topic
// keys, KafkaConfig (ServerConfigs, ServerLogConfigs, KRaftConfigs,
// SocketServerConfigs, ReplicationConfigs, GroupCoordinatorConfig, ...) for
// broker keys, ServerTopicConfigSynonyms for the topic ← broker mapping, and
// ConfigDef for how a value string is parsed and validated.
package configdef
