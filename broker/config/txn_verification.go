package config

import "github.com/strait-io/strait/broker/configdef"

// TxnPartitionVerificationFrom reads transaction.partition.verification.enable
// from src, the static configuration with the dynamic broker configs over
// it: the broker reads it again whenever those change, as Kafka's
// DynamicProducerStateManagerConfig.
func TxnPartitionVerificationFrom(src configdef.Sources) bool {
	return values{src}.boolean("transaction.partition.verification.enable")
}
