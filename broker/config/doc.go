// Package config is the broker's configuration as Kafka users write it:
// server.properties in Java's properties format, overridden by
// `strait serve --set key=value`, with Kafka's key names, defaults and
// validation (KafkaConfig). The definitions of the keys live in
// broker/configdef; this package parses a whole configuration, checks the
// keys against each other and exposes typed fields.
package config
