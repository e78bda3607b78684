package configdef

// clientQuotaDefs are the sampling of client quota rates (Kafka's
// QuotaConfig, KIP-13): each quota entity's rate is measured over
// quota.window.num windows of quota.window.size.seconds. Read-only, as in
// Kafka.
var clientQuotaDefs = []Def{
	{
		Name: "quota.window.num", Type: Int, Default: str("11"),
		Validate: atLeast(1),
		Doc:      `The number of samples a client quota's rate is measured over; a client over its quota is throttled until the rate over them is back under it.`,
	},
	{
		Name: "quota.window.size.seconds", Type: Int, Default: str("1"),
		Validate: atLeast(1),
		Doc:      `The time span of each client quota sample.`,
	},
}
