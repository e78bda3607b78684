package raftmeta

import "strings"

// MirrorClientQuotasSyncEnableConfig is Strait's mirror config (issue 32)
// that opts a mirror into copying the source cluster's client quotas
// (DescribeClientQuotas there, AlterClientQuotas here): off by default,
// as the quotas of a destination are often its own.
const MirrorClientQuotasSyncEnableConfig = "mirror.client.quotas.sync.enable"

func init() {
	mirrorConfigDefs[MirrorClientQuotasSyncEnableConfig] = mirrorConfigDef{def: "false", hasDef: true, check: checkBool}
}

// MirrorSyncsClientQuotas reports whether a mirror's configs set
// mirror.client.quotas.sync.enable.
func MirrorSyncsClientQuotas(configs map[string]string) bool {
	return strings.EqualFold(strings.TrimSpace(configs[MirrorClientQuotasSyncEnableConfig]), "true")
}
