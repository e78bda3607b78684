package wire

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"strconv"
	"time"

	"github.com/strait-io/strait/raftmeta/authz"
	"github.com/strait-io/strait/storage/clock"
	"github.com/strait-io/strait/wire/clientquota"
	"github.com/strait-io/strait/wire/sasl"
	"github.com/strait-io/strait/wire/sysmem"
)

// Defaults for the socket-server settings, Kafka's where Kafka has one.
const (
	// DefaultSocketRequestMaxBytes is Kafka's socket.request.max.bytes.
	DefaultSocketRequestMaxBytes = 104857600
	// DefaultConnectionsMaxIdle is Kafka's connections.max.idle.ms.
	DefaultConnectionsMaxIdle = 10 * time.Minute
	// DefaultMaxInflightRequests bounds the requests of one connection that
	// have been read but not yet answered. Kafka reads one request at a
	// time (the channel stays muted until the response is sent); a few more
	// let pipelining clients (kgo keeps up to 5 produce requests in flight)
	// overlap decoding with handling.
	DefaultMaxInflightRequests = 5
	// DefaultMaxBufferedResponseBytes bounds the response bytes one
	// connection may have waiting to be written before the server stops
	// reading its requests.
	DefaultMaxBufferedResponseBytes = 16 << 20
	// The listener security protocols served (Kafka's SecurityProtocol).
	SecurityProtocolPlaintext     = "PLAINTEXT"
	SecurityProtocolSSL           = "SSL"
	SecurityProtocolSASLPlaintext = "SASL_PLAINTEXT"
	SecurityProtocolSASLSSL       = "SASL_SSL"
	// DefaultSASLMaxReceiveSize is Kafka's sasl.server.max.receive.size:
	// the largest request a connection may send before it has
	// authenticated.
	DefaultSASLMaxReceiveSize = 524288
)

// Listener is one entry of Kafka's listeners setting, e.g.
// PLAINTEXT://127.0.0.1:9092. Port 0 binds an ephemeral port (tests);
// Server.Addrs reports the port actually bound.
type Listener struct {
	Name             string // listener name, e.g. PLAINTEXT or INTERNAL
	Host             string // "" binds every interface
	Port             int
	SecurityProtocol string // "" means PLAINTEXT; PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL
	// TLS serves an SSL or SASL_SSL listener (tls.go): certificates,
	// client auth, versions. Required for those, refused otherwise.
	TLS *tls.Config
	// SASL authenticates the connections of a SASL_PLAINTEXT or SASL_SSL
	// listener (sasl_auth.go). Required for those, refused otherwise.
	SASL *SASL
}

// SASL is a SASL listener's authentication settings.
type SASL struct {
	// Mechanisms are the listener's enabled mechanisms, in
	// sasl.enabled.mechanisms order (SaslHandshake lists them so).
	Mechanisms []sasl.Mechanism
	// MaxReceiveSize is sasl.server.max.receive.size: a request larger
	// than this before the connection has authenticated closes it before
	// anything of that size is allocated (default
	// DefaultSASLMaxReceiveSize).
	MaxReceiveSize int32
	// MaxReauth is connections.max.reauth.ms (KIP-368): when positive, an
	// authenticated session lasts this long (or until the credential
	// expires, if sooner); the client must re-authenticate on the
	// connection before it, or the connection is closed at its next
	// request. Zero: sessions do not expire.
	MaxReauth time.Duration
	// MaxReauthBy overrides MaxReauth for a mechanism, by name
	// (listener.name.<l>.<mechanism>.connections.max.reauth.ms).
	MaxReauthBy map[string]time.Duration
	// FailedAuthDelay is connection.failed.authentication.delay.ms: a
	// connection whose authentication failed gets its answer, and is
	// closed, only after this long, which slows down guessing passwords
	// (Kafka's DelayedResponseAuthenticationException). Zero: at once.
	FailedAuthDelay time.Duration
}

// Config is the wire server's part of the broker configuration. Zero
// values take the defaults above.
type Config struct {
	Listeners []Listener

	// SocketRequestMaxBytes is socket.request.max.bytes: a request whose
	// size prefix is larger closes the connection before anything of that
	// size is allocated.
	SocketRequestMaxBytes int32
	// ConnectionsMaxIdle is connections.max.idle.ms: a connection with no
	// request, no response written and nothing in flight for this long is
	// closed. Negative disables the check, as -1 does in Kafka.
	ConnectionsMaxIdle time.Duration
	// MaxInflightRequests per connection: past it the server stops
	// reading the connection until a response has been handed to the
	// socket.
	MaxInflightRequests int
	// MaxBufferedResponseBytes per connection: when the encoded responses
	// not yet written to the socket (ours and gnet's outbound buffer) reach
	// it, the server stops reading the connection until they drain.
	MaxBufferedResponseBytes int64
	// EventLoops is the number of gnet event loops per listener
	// (default defaultEventLoops(GOMAXPROCS)).
	EventLoops int
	// Clock times requests and idle connections (default the wall clock).
	Clock clock.Clock
	// DisableSendfile makes Fetch responses always go through a pooled
	// buffer and gnet instead of sendfile(2) on the socket (which is used
	// on Linux for plaintext listeners). Kafka has no such switch; it is
	// here for benchmarks and for ruling sendfile out when diagnosing.
	DisableSendfile bool

	// SSLHandshakeTimeout bounds the TLS handshake of a connection to an
	// SSL listener (default DefaultSSLHandshakeTimeout).
	SSLHandshakeTimeout time.Duration

	// Limits are the connection quotas (quotas.go); nil admits every
	// connection.
	Limits *ConnectionLimits

	// Authorizer enforces ACLs on every request (authorizer.class.name
	// set, authz.go); nil serves every request, Kafka's default.
	Authorizer *authz.Authorizer

	// ClientQuotaWindow is how client quota rates are sampled:
	// quota.window.num windows of quota.window.size.seconds (zero fields:
	// clientquota.DefaultWindow's, Kafka's 11 of 1 s).
	ClientQuotaWindow clientquota.Window

	// QueuedMaxRequestBytes is queued.max.request.bytes: the request
	// memory pool (reqmem.go). Negative means unbounded, as -1 (Kafka's
	// default) does in Kafka; 0 derives it from the memory the process may
	// use (DefaultQueuedMaxRequestBytes of sysmem.Available).
	QueuedMaxRequestBytes int64

	// MaxRequestPartitionSizeLimit is max.request.partition.size.limit:
	// the most partitions one DescribeTopicPartitions answers (KIP-966);
	// 0 means Kafka's default, 2000.
	MaxRequestPartitionSizeLimit int32

	// sendfileMin overrides defaultSendfileMin (tests); negative: none.
	sendfileMin int
	// stallChecks and watchEvery override how many watchdog checks
	// without a tick, how far apart, report a listener's event loops
	// dead (tests; see watchdog.go).
	stallChecks int
	watchEvery  time.Duration
	// stallTimeout overrides defaultStallTimeout (tests).
	stallTimeout time.Duration
	// queuedFrom says where a derived QueuedMaxRequestBytes came from.
	queuedFrom string
}

// ConnectionLimits are Kafka's connection quotas (ConnectionQuotas), with
// Kafka's values: math.MaxInt32, Kafka's default, means no limit.
type ConnectionLimits struct {
	// MaxConnections is max.connections: the connections all listeners
	// hold together. Past it a listener accepts nothing more until one
	// closes; the ones arriving wait in the kernel's listen backlog.
	MaxConnections int
	// ListenerMaxConnections is listener.name.<listener>.max.connections,
	// by listener name: the same, for one listener's connections.
	ListenerMaxConnections map[string]int
	// MaxConnectionsPerIP is max.connections.per.ip: a connection from an
	// address that already has this many is closed as it arrives.
	MaxConnectionsPerIP int
	// MaxConnectionsPerIPOverrides is max.connections.per.ip.overrides,
	// its host names resolved: the per-address limit for these addresses.
	MaxConnectionsPerIPOverrides map[netip.Addr]int
	// InterBrokerListener is the listener brokers use to reach each
	// other. When the server has more than one listener it is exempt from
	// MaxConnections, and a connection it accepts past MaxConnections
	// makes the other listeners close their least recently active one, so
	// clients cannot starve replication (Kafka's protected listener).
	InterBrokerListener string
}

// withDefaults returns cfg with zero values replaced by the defaults.
func (cfg Config) withDefaults() Config {
	if cfg.SocketRequestMaxBytes == 0 {
		cfg.SocketRequestMaxBytes = DefaultSocketRequestMaxBytes
	}
	if cfg.ConnectionsMaxIdle == 0 {
		cfg.ConnectionsMaxIdle = DefaultConnectionsMaxIdle
	}
	if cfg.MaxInflightRequests == 0 {
		cfg.MaxInflightRequests = DefaultMaxInflightRequests
	}
	if cfg.MaxBufferedResponseBytes == 0 {
		cfg.MaxBufferedResponseBytes = DefaultMaxBufferedResponseBytes
	}
	if cfg.EventLoops == 0 {
		cfg.EventLoops = defaultEventLoops(runtime.GOMAXPROCS(0))
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.QueuedMaxRequestBytes == 0 {
		avail, src := sysmem.Available()
		cfg.QueuedMaxRequestBytes = DefaultQueuedMaxRequestBytes(avail)
		cfg.queuedFrom = fmt.Sprintf("%s of %d MiB", src, avail>>20)
	}
	if cfg.MaxRequestPartitionSizeLimit <= 0 {
		cfg.MaxRequestPartitionSizeLimit = defaultMaxRequestPartitionSizeLimit
	}
	if cfg.SSLHandshakeTimeout == 0 {
		cfg.SSLHandshakeTimeout = DefaultSSLHandshakeTimeout
	}
	if cfg.stallTimeout == 0 {
		cfg.stallTimeout = defaultStallTimeout
	}
	for i := range cfg.Listeners {
		l := &cfg.Listeners[i]
		if l.SecurityProtocol == "" {
			l.SecurityProtocol = SecurityProtocolPlaintext
		}
		if l.SASL != nil && l.SASL.MaxReceiveSize == 0 {
			sc := *l.SASL
			sc.MaxReceiveSize = DefaultSASLMaxReceiveSize
			l.SASL = &sc
		}
	}
	return cfg
}

// validate reports the first bad setting, naming it as Kafka does.
func (cfg Config) validate() error {
	if len(cfg.Listeners) == 0 {
		return fmt.Errorf("%w: listeners: at least one listener is required", ErrInvalidConfig)
	}
	seen := make(map[string]bool, len(cfg.Listeners))
	for _, l := range cfg.Listeners {
		switch {
		case l.Name == "":
			return fmt.Errorf("%w: listeners: a listener has no name", ErrInvalidConfig)
		case seen[l.Name]:
			return fmt.Errorf("%w: listeners: listener name %s is used twice", ErrInvalidConfig, l.Name)
		case l.Port < 0 || l.Port > 65535:
			return fmt.Errorf("%w: listeners: listener %s has port %d", ErrInvalidConfig, l.Name, l.Port)
		case l.SecurityProtocol != SecurityProtocolPlaintext && l.SecurityProtocol != SecurityProtocolSSL &&
			l.SecurityProtocol != SecurityProtocolSASLPlaintext && l.SecurityProtocol != SecurityProtocolSASLSSL:
			return fmt.Errorf("%w: listeners: listener %s uses %s; only PLAINTEXT, SSL, SASL_PLAINTEXT and SASL_SSL are supported", ErrInvalidConfig, l.Name, l.SecurityProtocol)
		case usesTLS(l.SecurityProtocol) && l.TLS == nil:
			return fmt.Errorf("%w: listeners: listener %s: %v", ErrInvalidConfig, l.Name, errTLSConfig)
		case !usesTLS(l.SecurityProtocol) && l.TLS != nil:
			return fmt.Errorf("%w: listeners: listener %s is %s but has a TLS configuration", ErrInvalidConfig, l.Name, l.SecurityProtocol)
		case usesSASL(l.SecurityProtocol) && (l.SASL == nil || len(l.SASL.Mechanisms) == 0):
			return fmt.Errorf("%w: listeners: listener %s is %s but enables no SASL mechanism", ErrInvalidConfig, l.Name, l.SecurityProtocol)
		case !usesSASL(l.SecurityProtocol) && l.SASL != nil:
			return fmt.Errorf("%w: listeners: listener %s is %s but has a SASL configuration", ErrInvalidConfig, l.Name, l.SecurityProtocol)
		case l.SASL != nil && (l.SASL.MaxReceiveSize < 0 || l.SASL.MaxReauth < 0 || l.SASL.FailedAuthDelay < 0):
			return fmt.Errorf("%w: listeners: listener %s: sasl.server.max.receive.size, connections.max.reauth.ms and connection.failed.authentication.delay.ms must not be negative", ErrInvalidConfig, l.Name)
		}
		seen[l.Name] = true
	}
	switch {
	case cfg.SocketRequestMaxBytes < 0:
		return fmt.Errorf("%w: socket.request.max.bytes must be positive, got %d", ErrInvalidConfig, cfg.SocketRequestMaxBytes)
	case cfg.MaxInflightRequests < 1:
		return fmt.Errorf("%w: max in-flight requests per connection must be at least 1, got %d", ErrInvalidConfig, cfg.MaxInflightRequests)
	case cfg.MaxBufferedResponseBytes < 1:
		return fmt.Errorf("%w: max buffered response bytes must be positive, got %d", ErrInvalidConfig, cfg.MaxBufferedResponseBytes)
	case cfg.EventLoops < 1:
		return fmt.Errorf("%w: event loops must be at least 1, got %d", ErrInvalidConfig, cfg.EventLoops)
	}
	return cfg.Limits.validate(seen)
}

// validate checks that no limit is negative and that the listener limits
// name configured listeners.
func (lim *ConnectionLimits) validate(listeners map[string]bool) error {
	if lim == nil {
		return nil
	}
	switch {
	case lim.MaxConnections < 0:
		return fmt.Errorf("%w: max.connections must be at least 0, got %d", ErrInvalidConfig, lim.MaxConnections)
	case lim.MaxConnectionsPerIP < 0:
		return fmt.Errorf("%w: max.connections.per.ip must be at least 0, got %d", ErrInvalidConfig, lim.MaxConnectionsPerIP)
	}
	for name, n := range lim.ListenerMaxConnections {
		if !listeners[name] {
			return fmt.Errorf("%w: max.connections of listener %s: no such listener", ErrInvalidConfig, name)
		}
		if n < 0 {
			return fmt.Errorf("%w: max.connections of listener %s must be at least 0, got %d", ErrInvalidConfig, name, n)
		}
	}
	for addr, n := range lim.MaxConnectionsPerIPOverrides {
		if n < 0 {
			return fmt.Errorf("%w: max.connections.per.ip.overrides: %s must be at least 0, got %d", ErrInvalidConfig, addr, n)
		}
	}
	return nil
}

// address is the listener's host:port as gnet binds it.
func (l Listener) address() string {
	return net.JoinHostPort(l.Host, strconv.Itoa(l.Port))
}

// defaultEventLoops is half of GOMAXPROCS, at least one. An event loop only
// reads frames and writes responses; requests run on their own goroutines,
// which need the other Ps. A loop also waits in a blocking epoll_wait that
// holds its P until the runtime's sysmon takes it back, so a loop per P
// leaves request goroutines waiting for sysmon: with two Ps, one loop
// instead of two raised three nodes' RF=3 acks=all throughput on a two-core
// machine by about 15% (`strait bench cluster`, alternating runs).
func defaultEventLoops(gomaxprocs int) int {
	return max(1, gomaxprocs/2)
}

// usesTLS reports whether a listener of protocol p runs TLS (SSL, SASL_SSL).
func usesTLS(p string) bool { return p == SecurityProtocolSSL || p == SecurityProtocolSASLSSL }

// usesSASL reports whether a listener of protocol p authenticates with SASL.
func usesSASL(p string) bool {
	return p == SecurityProtocolSASLPlaintext || p == SecurityProtocolSASLSSL
}
