package raftmeta

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/jaas"
	"github.com/strait-io/strait/raftmeta/mirrorstate"
)

// A mirror's configs (digest §5.1, the prototype's ClusterMirrorConfig):
// how the destination's brokers reach the source cluster, and which topics,
// groups, ACLs and topic properties the mirror copies. They are stored as
// the MIRROR config resource of the mirror (ConfigResourceMirror).
//
// The client settings are the Kafka client's names, restricted to what the
// mirror's Go client (franz-go) can honour with values held in the metadata
// log: nothing that names a class to load or a file to read on a broker (a
// mirror is created over the network, and broker-side files and classes
// would let its creator reach into the broker), and no setting that would
// be silently ignored. Every other key is refused with INVALID_CONFIG
// naming it, as an unknown topic config is.

// mirrorConfigDef is one accepted key.
type mirrorConfigDef struct {
	// def is the default the mirror uses when the key is unset ("" and
	// hasDef false: none).
	def    string
	hasDef bool
	// sensitive values are never returned (DescribeMirrorConfigs).
	sensitive bool
	// check validates a value.
	check func(v string) error
}

var mirrorSecurityProtocols = []string{"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"}

// saslMechanisms are those sasl.jaas.config can configure (PLAIN and
// SCRAM; GSSAPI and OAUTHBEARER need callbacks or files).
var saslMechanisms = []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}

// defaultMirrorTopicPropertiesExclude is mirror.topic.properties.exclude's
// default (ClusterMirrorConfig); mirror.name is always excluded besides.
const defaultMirrorTopicPropertiesExclude = "follower.replication.throttled.replicas,leader.replication.throttled.replicas," +
	"message.timestamp.difference.max.ms,log.message.timestamp.before.max.ms,log.message.timestamp.after.max.ms," +
	"message.timestamp.type,unclean.leader.election.enable,min.insync.replicas,mirror.name"

var mirrorConfigDefs = map[string]mirrorConfigDef{
	"bootstrap.servers":   {check: checkBootstrapServers},
	"security.protocol":   {def: "PLAINTEXT", hasDef: true, check: oneOf(mirrorSecurityProtocols, true)},
	"sasl.mechanism":      {def: "PLAIN", hasDef: true, check: oneOf(saslMechanisms, false)},
	"sasl.jaas.config":    {sensitive: true, check: func(v string) error { _, err := ParseMirrorJAAS(v); return err }},
	"ssl.truststore.type": {def: "PEM", hasDef: true, check: oneOf([]string{"PEM"}, true)},
	"ssl.truststore.certificates": {check: func(v string) error {
		_, err := parsePEMCertificates(v)
		return err
	}},
	"ssl.keystore.type": {def: "PEM", hasDef: true, check: oneOf([]string{"PEM"}, true)},
	"ssl.keystore.certificate.chain": {check: func(v string) error {
		_, err := parsePEMCertificates(v)
		return err
	}},
	"ssl.keystore.key":                      {sensitive: true, check: checkPEMPrivateKey},
	"ssl.endpoint.identification.algorithm": {def: "https", hasDef: true, check: oneOf([]string{"https", ""}, true)},
	"ssl.protocol":                          {def: "TLSv1.3", hasDef: true, check: oneOf([]string{"TLS", "TLSv1.2", "TLSv1.3"}, false)},
	"ssl.enabled.protocols":                 {def: "TLSv1.2,TLSv1.3", hasDef: true, check: listOf(oneOf([]string{"TLSv1.2", "TLSv1.3"}, false))},
	"ssl.cipher.suites":                     {check: listOf(checkCipherSuite)},

	"mirror.topics.include":                  {def: "", hasDef: true, check: listOf(checkRegex)},
	"mirror.topics.exclude":                  {def: "__.*", hasDef: true, check: listOf(checkRegex)},
	"mirror.groups.include":                  {def: ".*", hasDef: true, check: listOf(checkRegex)},
	"mirror.groups.exclude":                  {def: "", hasDef: true, check: listOf(checkRegex)},
	"mirror.acl.include":                     {def: "*", hasDef: true, check: listOf(checkACLRule)},
	"mirror.topic.properties.exclude":        {def: defaultMirrorTopicPropertiesExclude, hasDef: true, check: listOf(checkNonEmpty)},
	"mirror.support.unclean.leader.election": {def: "false", hasDef: true, check: checkBool},
	// The metadata sync period (digest §5.2 lists it as a broker config;
	// Strait takes it per mirror, so each mirror may sync at its own pace).
	"mirror.metadata.refresh.interval.ms": {def: "60000", hasDef: true, check: checkPositiveLong},
	// Strait's own (issue 31): whether a start may delete the records an
	// existing destination topic holds that the source cluster does not
	// share (it has no last mirrored epoch for the partition: the KIP's
	// first-time rule truncates everything). False refuses such a start,
	// naming the partitions and their record counts.
	MirrorTruncateExistingConfig: {def: "false", hasDef: true, check: checkBool},
	// Strait's own (issue 25): the SCRAM users the syncer copies from a
	// Strait source (opt-in; the source must serve
	// DescribeScramCredentialSecrets on an encrypted listener).
	MirrorScramSyncEnableConfig:  {def: "false", hasDef: true, check: checkBool},
	"mirror.scram.users.include": {def: ".*", hasDef: true, check: listOf(checkRegex)},
	"mirror.scram.users.exclude": {def: "", hasDef: true, check: listOf(checkRegex)},
	// Strait's own (issue 27), named in KIP-1279's style: what the group
	// offset sync does with a group that has members on the destination.
	// skip (the KIP's rule) leaves it alone; forward-only moves each of
	// its partitions' committed offsets forward to the source's, never
	// back, compared and written inside the group coordinator.
	MirrorActiveGroupsSyncConfig: {def: MirrorActiveGroupsSkip, hasDef: true, check: oneOf([]string{MirrorActiveGroupsSkip, MirrorActiveGroupsForwardOnly}, false)},
	// Strait's own (issue 27, the RPO guard): a stop refuses a topic
	// whose lag is above this many ms or unknown, unless forced; -1 for no
	// bound.
	MirrorFailoverMaxLagMsConfig: {def: "-1", hasDef: true, check: checkLagBound},
	// Strait's own (issue 27, loud failure): whether a partition whose
	// source deleted records before they were mirrored (log start past the
	// destination's end) skips them and mirrors on (counted, logged) rather
	// than going FAILED. mirror/source.SkipDeletedOffsetsConfig.
	"mirror.offsets.skip.enable": {def: "false", hasDef: true, check: checkBool},
}

// MirrorActiveGroupsSyncConfig is the mirror config that chooses how the
// group offset sync treats groups active on the destination, and its
// values.
const (
	MirrorActiveGroupsSyncConfig  = "mirror.consumer.offsets.sync.active.groups"
	MirrorActiveGroupsSkip        = "skip"
	MirrorActiveGroupsForwardOnly = "forward-only"
)

// MirrorScramSyncEnableConfig is the mirror config that opts the mirror
// into the SCRAM user sync.
const MirrorScramSyncEnableConfig = "mirror.scram.sync.enable"

// MirrorSyncsScram reports whether a mirror's configs set
// mirror.scram.sync.enable.
func MirrorSyncsScram(configs map[string]string) bool {
	return strings.EqualFold(strings.TrimSpace(configs[MirrorScramSyncEnableConfig]), "true")
}

// MirrorTruncateExistingConfig is the mirror config that lets a start
// delete records the source does not share.
const MirrorTruncateExistingConfig = "mirror.truncate.existing"

// MirrorTruncatesExisting reports whether a mirror's configs set
// mirror.truncate.existing.
func MirrorTruncatesExisting(configs map[string]string) bool {
	return strings.EqualFold(strings.TrimSpace(configs[MirrorTruncateExistingConfig]), "true")
}

// MirrorFailoverMaxLagMsConfig is the mirror config bounding the lag in
// milliseconds a stop (failover) accepts (issue 27's RPO guard).
const MirrorFailoverMaxLagMsConfig = "mirror.failover.max.lag.ms"

// MirrorFailoverMaxLagMs returns a mirror's mirror.failover.max.lag.ms, -1
// when unset (or unreadable, which validation prevents).
func MirrorFailoverMaxLagMs(configs map[string]string) int64 {
	v, ok := configs[MirrorFailoverMaxLagMsConfig]
	if !ok {
		return -1
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// mirrorListConfigs are the mirror configs of Kafka's LIST type, which
// IncrementalAlterConfigs APPEND and SUBTRACT accept.
var mirrorListConfigs = map[string]bool{
	"bootstrap.servers":               true,
	"ssl.enabled.protocols":           true,
	"ssl.cipher.suites":               true,
	"mirror.topics.include":           true,
	"mirror.topics.exclude":           true,
	"mirror.groups.include":           true,
	"mirror.groups.exclude":           true,
	"mirror.acl.include":              true,
	"mirror.topic.properties.exclude": true,
	"mirror.scram.users.include":      true,
	"mirror.scram.users.exclude":      true,
}

// validateMirrorConfigChange validates a mirror's configs as an alter
// would leave them (no nil values: deleted keys are absent).
func validateMirrorConfigChange(configs map[string]*string) *apiError {
	plain := make(map[string]string, len(configs))
	for k, v := range configs {
		if v != nil {
			plain[k] = *v
		}
	}
	if err := ValidateMirrorConfigs(plain); err != nil {
		return errorf(kerr.InvalidConfig, "%s", err.Error())
	}
	return nil
}

// refusedMirrorConfigs are Kafka client settings a mirror does not accept,
// with the reason.
var refusedMirrorConfigs = map[string]string{
	"ssl.truststore.location":          "file paths are not accepted; give the PEM certificates in ssl.truststore.certificates",
	"ssl.keystore.location":            "file paths are not accepted; give the PEM key and chain in ssl.keystore.key and ssl.keystore.certificate.chain",
	"ssl.truststore.password":          "only PEM stores given inline are supported, they have no password",
	"ssl.keystore.password":            "only PEM stores given inline are supported, they have no password",
	"ssl.key.password":                 "encrypted keys are not supported; give ssl.keystore.key unencrypted (it is never returned)",
	"ssl.provider":                     "JCA providers do not apply to Strait",
	"ssl.keymanager.algorithm":         "JCA algorithms do not apply to Strait",
	"ssl.trustmanager.algorithm":       "JCA algorithms do not apply to Strait",
	"ssl.secure.random.implementation": "JCA algorithms do not apply to Strait",
	"security.providers":               "class names are not accepted",
	"sasl.kerberos.service.name":       "GSSAPI is not supported",
}

// MirrorConfigDefault returns the default of a mirror config key, and
// whether it has one (bootstrap.servers has none: it is required).
func MirrorConfigDefault(key string) (string, bool) {
	d, ok := mirrorConfigDefs[key]
	return d.def, ok && d.hasDef
}

// IsMirrorConfigSensitive reports whether a mirror config's value is a
// secret, which is never returned.
func IsMirrorConfigSensitive(key string) bool {
	d, ok := mirrorConfigDefs[key]
	// A key we do not know (an older version's) is treated as secret, as
	// Kafka treats configs of unknown type.
	return !ok || d.sensitive
}

// MirrorConfigEntry is one config of a mirror as it may be shown.
type MirrorConfigEntry struct {
	Name string
	// Value is nil for a sensitive config.
	Value     *string
	Sensitive bool
}

// DescribeMirrorConfigs returns a mirror's stored configs sorted by key,
// with secrets (sasl.jaas.config, ssl.keystore.key) as null values, for
// DescribeConfigs on the MIRROR resource. ok is false for an unknown
// mirror.
func DescribeMirrorConfigs(img *Image, mirror string) (entries []MirrorConfigEntry, ok bool) {
	if _, ok := img.Mirrors[mirror]; !ok {
		return nil, false
	}
	cfg := img.MirrorConfig(mirror)
	for _, k := range slices.Sorted(maps.Keys(cfg)) {
		e := MirrorConfigEntry{Name: k, Sensitive: IsMirrorConfigSensitive(k)}
		if !e.Sensitive {
			e.Value = strp(cfg[k])
		}
		entries = append(entries, e)
	}
	return entries, true
}

// ValidateMirrorName checks a mirror name: a topic name's rules (the
// prototype's ClusterMirrorRecordKey: 1 to 249 of [a-zA-Z0-9._-], not "."
// or "..") and not ending in a mirror.name suffix (.paused, .removed),
// which would make "<name>" read as another mirror's state.
func ValidateMirrorName(name string) error {
	if err := ValidateTopicName(name); err != nil {
		return fmt.Errorf("Mirror name is invalid: %s", strings.TrimPrefix(err.Error(), "Topic name is invalid: "))
	}
	for _, s := range []string{mirrorstate.SuffixPaused, mirrorstate.SuffixRemoved} {
		if strings.HasSuffix(name, s) {
			return fmt.Errorf("Mirror name is invalid: '%s' ends in '%s', the suffix mirror.name gives a topic's state", name, s)
		}
	}
	return nil
}

// ValidateMirrorConfigs checks a mirror's whole config set (the keys as
// stored; no nil values): every key accepted and valid, bootstrap.servers
// set, and the settings consistent with security.protocol (SASL settings
// only for SASL_*, TLS ones only for SSL and SASL_SSL, a JAAS login module
// that matches sasl.mechanism, a key with its certificate chain). The
// error names the first bad key, in key order.
func ValidateMirrorConfigs(configs map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(configs)) {
		v := configs[k]
		if why, ok := refusedMirrorConfigs[k]; ok {
			return fmt.Errorf("Invalid value for mirror config %s: %s", k, why)
		}
		if strings.HasSuffix(k, ".class") || strings.HasSuffix(k, ".classes") {
			return fmt.Errorf("Invalid mirror config %s: class names are not accepted", k)
		}
		d, ok := mirrorConfigDefs[k]
		if !ok {
			return fmt.Errorf("Unknown mirror config name: %s", k)
		}
		if err := d.check(v); err != nil {
			return fmt.Errorf("Invalid value %s for mirror config %s: %w", printable(k, v), k, err)
		}
	}
	if strings.TrimSpace(configs["bootstrap.servers"]) == "" {
		return fmt.Errorf("Missing required mirror config bootstrap.servers (the source cluster's host:port list)")
	}
	proto := strings.ToUpper(configs["security.protocol"])
	if proto == "" {
		proto = "PLAINTEXT"
	}
	sasl := proto == "SASL_PLAINTEXT" || proto == "SASL_SSL"
	tlsOn := proto == "SSL" || proto == "SASL_SSL"
	for _, k := range slices.Sorted(maps.Keys(configs)) {
		switch {
		case strings.HasPrefix(k, "sasl.") && !sasl:
			return fmt.Errorf("Invalid mirror config %s: SASL settings need security.protocol SASL_PLAINTEXT or SASL_SSL, not %s", k, proto)
		case strings.HasPrefix(k, "ssl.") && !tlsOn:
			return fmt.Errorf("Invalid mirror config %s: TLS settings need security.protocol SSL or SASL_SSL, not %s", k, proto)
		}
	}
	if sasl {
		jaas, ok := configs["sasl.jaas.config"]
		if !ok {
			return fmt.Errorf("Missing mirror config sasl.jaas.config: security.protocol %s needs the source credentials", proto)
		}
		login, _ := ParseMirrorJAAS(jaas)
		mech := configs["sasl.mechanism"]
		if mech == "" {
			mech = "PLAIN"
		}
		if want := jaasModuleFor(mech); login.Module != want {
			return fmt.Errorf("Invalid mirror config sasl.jaas.config: sasl.mechanism %s needs the login module %s, not %s", mech, want, login.Module)
		}
	}
	_, key := configs["ssl.keystore.key"]
	_, chain := configs["ssl.keystore.certificate.chain"]
	if key != chain {
		return fmt.Errorf("Invalid mirror config ssl.keystore.key: it needs ssl.keystore.certificate.chain, and the chain the key")
	}
	return nil
}

// printable is a value for an error message: secrets are not echoed.
func printable(key, v string) string {
	if IsMirrorConfigSensitive(key) {
		return "(hidden)"
	}
	return strconv.Quote(v)
}

// The JAAS login modules a mirror accepts; each is a fixed name the mirror
// maps to franz-go's SASL mechanism, never a class it loads.
const (
	jaasPlainModule = "org.apache.kafka.common.security.plain.PlainLoginModule"
	jaasScramModule = "org.apache.kafka.common.security.scram.ScramLoginModule"
)

func jaasModuleFor(mechanism string) string {
	if mechanism == "PLAIN" {
		return jaasPlainModule
	}
	return jaasScramModule
}

// MirrorJAAS is a parsed sasl.jaas.config.
type MirrorJAAS struct {
	Module             string
	Username, Password string
}

// ParseMirrorJAAS parses a sasl.jaas.config value: PlainLoginModule or
// ScramLoginModule, "required", and username and password options only
// (the mirror's client needs nothing else). The grammar is the shared
// raftmeta/jaas parser's; these are the mirror's restrictions on top.
func ParseMirrorJAAS(v string) (MirrorJAAS, error) {
	var out MirrorJAAS
	c, err := jaas.Parse(v)
	if errors.Is(err, jaas.ErrSyntax) {
		return out, fmt.Errorf(`expected '<LoginModule> required username="..." password="...";'`)
	}
	if err != nil {
		return out, err
	}
	out.Module = c.Module
	if out.Module != jaasPlainModule && out.Module != jaasScramModule {
		return out, fmt.Errorf("login module %s is not accepted (only %s and %s)", out.Module, jaasPlainModule, jaasScramModule)
	}
	if c.Flag != "required" {
		return out, fmt.Errorf("control flag %s is not accepted (only required)", c.Flag)
	}
	for k := range c.Options {
		if k != "username" && k != "password" {
			return out, fmt.Errorf("option %s is not accepted (only username and password)", k)
		}
	}
	var hasUser, hasPass bool
	out.Username, hasUser = c.Options["username"]
	out.Password, hasPass = c.Options["password"]
	if !hasUser || !hasPass {
		return out, fmt.Errorf("username and password are required")
	}
	return out, nil
}

// --- value checks ---

func oneOf(values []string, foldCase bool) func(string) error {
	return func(v string) error {
		for _, ok := range values {
			if v == ok || (foldCase && strings.EqualFold(v, ok)) {
				return nil
			}
		}
		return fmt.Errorf("not one of %s", strings.Join(values, ", "))
	}
}

// listOf checks each entry of a comma-separated list (entries trimmed,
// empty ones skipped, as Kafka's LIST type).
func listOf(check func(string) error) func(string) error {
	return func(v string) error {
		for _, e := range strings.Split(v, ",") {
			if e = strings.TrimSpace(e); e == "" {
				continue
			}
			if err := check(e); err != nil {
				return fmt.Errorf("%q: %w", e, err)
			}
		}
		return nil
	}
}

func checkNonEmpty(v string) error {
	if v == "" {
		return fmt.Errorf("empty")
	}
	return nil
}

func checkBool(v string) error {
	if !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
		return fmt.Errorf("not true or false")
	}
	return nil
}

func checkPositiveLong(v string) error {
	if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err != nil || n < 1 {
		return fmt.Errorf("not a number of milliseconds of at least 1")
	}
	return nil
}

// checkLagBound accepts a bound of 0 or more, or -1 for none.
func checkLagBound(v string) error {
	if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err != nil || n < -1 {
		return fmt.Errorf("not a number of milliseconds of at least 0, or -1 for no bound")
	}
	return nil
}

func checkBootstrapServers(v string) error {
	n := 0
	for _, e := range strings.Split(v, ",") {
		if e = strings.TrimSpace(e); e == "" {
			continue
		}
		host, port, err := net.SplitHostPort(e)
		if err != nil {
			return fmt.Errorf("%q is not host:port", e)
		}
		if host == "" {
			return fmt.Errorf("%q has no host", e)
		}
		if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
			return fmt.Errorf("%q has no valid port", e)
		}
		n++
	}
	if n == 0 {
		return fmt.Errorf("no host:port")
	}
	return nil
}

// checkRegex compiles a pattern as the mirror matches names: whole names
// (^(?:p)$). Go's RE2 syntax, which differs from Java's in corners
// (no backreferences or lookaround).
func checkRegex(v string) error {
	if _, err := regexp.Compile("^(?:" + v + ")$"); err != nil {
		return err
	}
	return nil
}

// checkACLRule checks a mirror.acl.include rule,
// resourceType;resourceName;operation;permissionType;principal, with "*"
// for any, regexes for the name and principal, and trailing fields
// optional.
func checkACLRule(v string) error {
	f := strings.Split(v, ";")
	if len(f) > 5 {
		return fmt.Errorf("more than 5 fields (resourceType;resourceName;operation;permissionType;principal)")
	}
	for i := range f {
		f[i] = strings.TrimSpace(f[i])
	}
	enum := func(i int, parse func(string) error) error {
		if i >= len(f) || f[i] == "*" {
			return nil
		}
		return parse(f[i])
	}
	if err := enum(0, func(s string) error { _, err := kmsg.ParseACLResourceType(s); return err }); err != nil {
		return fmt.Errorf("resource type: %w", err)
	}
	if err := enum(2, func(s string) error { _, err := kmsg.ParseACLOperation(s); return err }); err != nil {
		return fmt.Errorf("operation: %w", err)
	}
	if err := enum(3, func(s string) error { _, err := kmsg.ParseACLPermissionType(s); return err }); err != nil {
		return fmt.Errorf("permission type: %w", err)
	}
	for _, i := range []int{1, 4} {
		if err := enum(i, checkRegex); err != nil {
			return err
		}
	}
	return nil
}

func checkCipherSuite(v string) error {
	for _, cs := range tls.CipherSuites() {
		if cs.Name == v {
			return nil
		}
	}
	return fmt.Errorf("not a secure cipher suite Go's TLS knows")
}

func parsePEMCertificates(v string) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	rest := []byte(v)
	for {
		var blk *pem.Block
		blk, rest = pem.Decode(rest)
		if blk == nil {
			break
		}
		if blk.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("PEM block %s is not a CERTIFICATE", blk.Type)
		}
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			return nil, err
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return nil, fmt.Errorf("no PEM certificate")
	}
	if strings.TrimSpace(string(rest)) != "" {
		return nil, fmt.Errorf("text after the PEM certificates")
	}
	return certs, nil
}

// checkPEMPrivateKey accepts one unencrypted PKCS#8, PKCS#1 or EC key.
// The error never quotes the key.
func checkPEMPrivateKey(v string) error {
	blk, rest := pem.Decode([]byte(v))
	if blk == nil || strings.TrimSpace(string(rest)) != "" {
		return fmt.Errorf("not one PEM private key")
	}
	var err error
	switch blk.Type {
	case "PRIVATE KEY":
		_, err = x509.ParsePKCS8PrivateKey(blk.Bytes)
	case "RSA PRIVATE KEY":
		_, err = x509.ParsePKCS1PrivateKey(blk.Bytes)
	case "EC PRIVATE KEY":
		_, err = x509.ParseECPrivateKey(blk.Bytes)
	default:
		return fmt.Errorf("PEM block %s is not an unencrypted private key", blk.Type)
	}
	if err != nil {
		return fmt.Errorf("the private key does not parse")
	}
	return nil
}
