// Package kit is the plumbing every `strait` client command shares (issue
// 28: topic, group, produce, consume, cluster, acl, user, profile,
// completion): the command tree and its flag parsing (flags before or after
// the arguments), the connection (brokers, TLS, SASL) from flags, -X
// overrides, environment and a profile file, the franz-go clients, table
// and --json output, and exit codes.
//
// The connection takes Kafka's client property names, as Kafka's own tools
// do with --command-config: security.protocol, ssl.truststore.location,
// ssl.keystore.location / ssl.key.location (PEM files),
// ssl.endpoint.identification.algorithm, sasl.mechanism and
// sasl.jaas.config, or the short forms rpk users know (tls.enabled,
// tls.ca, tls.cert, tls.key, sasl.mechanism, user, pass). Precedence, last
// wins: the profile, then STRAIT_BROKERS / STRAIT_PROFILE, then
// --command-config, then -X key=value, then --brokers.
//
// Exit status: 0 success; 1 the cluster answered with an error or could
// not be reached (one line on stderr: "strait topic create: NAME: message");
// 2 a usage error (one line naming the problem, then the synopsis).
package kit
