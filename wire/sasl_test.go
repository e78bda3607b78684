package wire

import (
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	saslplain "github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/strait-io/strait/raftmeta/authz/reqctx"
	"github.com/strait-io/strait/wire/sasl"
	"github.com/strait-io/strait/wire/sasl/plain"
	"github.com/strait-io/strait/wire/tlstest"
)

// authCounts counts the authenticator's metrics.
type authCounts struct {
	NopMetrics
	mu                       sync.Mutex
	ok, failed, reauth, bad2 int
}

func (m *authCounts) Authenticated(_, _ string, reauth bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if reauth {
		m.reauth++
	} else {
		m.ok++
	}
}

func (m *authCounts) AuthenticationFailed(_, _ string, reauth bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if reauth {
		m.bad2++
	} else {
		m.failed++
	}
}

func (m *authCounts) get() (ok, failed, reauth, reauthFailed int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ok, m.failed, m.reauth, m.bad2
}

// principalProbe answers Heartbeat (key 12) and reports the request's
// principal.
func principalProbe() (api, <-chan string) {
	got := make(chan string, 16)
	return api{key: 12, min: 0, max: 4, handle: func(_ *Server, ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
		got <- reqctx.From(ctx).Principal
		return kreq.(*kmsg.HeartbeatRequest).ResponseKind(), nil
	}}, got
}

var testUsers = map[string]string{"admin": "admin-secret", "alice": "alice-secret", "bob": "bob-secret"}

func saslListener(reauth time.Duration) Listener {
	return Listener{Name: "SASL", Host: "127.0.0.1", SecurityProtocol: SecurityProtocolSASLPlaintext,
		SASL: &SASL{Mechanisms: []sasl.Mechanism{plain.New(testUsers)}, MaxReauth: reauth}}
}

func newSASLServer(t *testing.T, reauth time.Duration, m Metrics, extra ...api) *Server {
	t.Helper()
	return newTestServer(t, Config{Listeners: []Listener{saslListener(reauth)}}, m, extra...)
}

func handshakeReq(mech string) *kmsg.SASLHandshakeRequest {
	req := kmsg.NewPtrSASLHandshakeRequest()
	req.Version = 1
	req.Mechanism = mech
	return req
}

func authReq(version int16, token []byte) *kmsg.SASLAuthenticateRequest {
	req := kmsg.NewPtrSASLAuthenticateRequest()
	req.Version = version
	req.SASLAuthBytes = token
	return req
}

func plainToken(user, pass string) []byte { return []byte("\x00" + user + "\x00" + pass) }

// handshake sends SaslHandshake and checks it is accepted.
func (c *rawClient) handshake(mech string) *kmsg.SASLHandshakeResponse {
	c.t.Helper()
	req := handshakeReq(mech)
	c.send(1, req)
	resp := req.ResponseKind().(*kmsg.SASLHandshakeResponse)
	c.readResp(resp)
	return resp
}

// authenticate sends one SaslAuthenticate and returns the answer.
func (c *rawClient) authenticate(version int16, token []byte) *kmsg.SASLAuthenticateResponse {
	c.t.Helper()
	req := authReq(version, token)
	c.send(2, req)
	resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
	c.readResp(resp)
	return resp
}

func (c *rawClient) loginPlain(version int16, user, pass string) *kmsg.SASLAuthenticateResponse {
	c.t.Helper()
	if resp := c.handshake("PLAIN"); resp.ErrorCode != 0 {
		c.t.Fatalf("SaslHandshake PLAIN: error %d", resp.ErrorCode)
	}
	return c.authenticate(version, plainToken(user, pass))
}

func expectPrincipal(t *testing.T, got <-chan string, want string) {
	t.Helper()
	select {
	case p := <-got:
		if p != want {
			t.Fatalf("principal %q, want %q", p, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the request never reached its handler")
	}
}

// TestSASLPlainAuthenticates: ApiVersions, SaslHandshake PLAIN and
// SaslAuthenticate, then a request runs as User:alice.
func TestSASLPlainAuthenticates(t *testing.T) {
	probe, got := principalProbe()
	m := &authCounts{}
	s := newSASLServer(t, 0, m, probe)
	c := dialRaw(t, s.Addrs()["SASL"])
	c.send(0, apiVersionsReq())
	av := kmsg.NewPtrApiVersionsResponse()
	av.Version = 3
	c.readResp(av)
	served := map[int16][2]int16{}
	for _, k := range av.ApiKeys {
		served[k.ApiKey] = [2]int16{k.MinVersion, k.MaxVersion}
	}
	if served[17] != [2]int16{0, 1} || served[36] != [2]int16{0, 2} {
		t.Fatalf("advertised SaslHandshake %v SaslAuthenticate %v, want v0-1 and v0-2", served[17], served[36])
	}
	hs := c.handshake("PLAIN")
	if hs.ErrorCode != 0 || strings.Join(hs.SupportedMechanisms, ",") != "PLAIN" {
		t.Fatalf("SaslHandshake: error %d mechanisms %v", hs.ErrorCode, hs.SupportedMechanisms)
	}
	resp := c.authenticate(2, plainToken("alice", "alice-secret"))
	if resp.ErrorCode != 0 || resp.SessionLifetimeMillis != 0 {
		t.Fatalf("SaslAuthenticate: error %d %v lifetime %d", resp.ErrorCode, resp.ErrorMessage, resp.SessionLifetimeMillis)
	}
	c.send(3, heartbeat("g", "m"))
	expectPrincipal(t, got, "User:alice")
	if ok, failed, _, _ := m.get(); ok != 1 || failed != 0 {
		t.Fatalf("metrics: %d authenticated, %d failed; want 1, 0", ok, failed)
	}
}

// TestSASLBadCredentials: a wrong password, an unknown user, an authzid
// other than the user and a token that is not PLAIN's three fields each get
// SASL_AUTHENTICATION_FAILED with a message that tells nothing of the user,
// then the connection closes; the broker keeps serving.
func TestSASLBadCredentials(t *testing.T) {
	m := &authCounts{}
	s := newSASLServer(t, 0, m)
	addr := s.Addrs()["SASL"]
	for i, tc := range []struct {
		name, want string
		token      []byte
	}{
		{"wrong password", "Invalid username or password", plainToken("alice", "nope")},
		{"unknown user", "Invalid username or password", plainToken("mallory", "alice-secret")},
		{"other authzid", "authorization id that is different", []byte("bob\x00alice\x00alice-secret")},
		{"garbage", "expected 3 tokens, got 1", []byte("\xff\xfegarbage")},
		{"empty", "expected 3 tokens", nil},
	} {
		c := dialRaw(t, addr)
		c.handshake("PLAIN")
		resp := c.authenticate(1, tc.token)
		if resp.ErrorCode != kerr.SaslAuthenticationFailed.Code || resp.ErrorMessage == nil || !strings.Contains(*resp.ErrorMessage, tc.want) {
			t.Fatalf("%s: error %d %v, want SASL_AUTHENTICATION_FAILED %q", tc.name, resp.ErrorCode, resp.ErrorMessage, tc.want)
		}
		if strings.Contains(*resp.ErrorMessage, "secret") || strings.Contains(*resp.ErrorMessage, "mallory") {
			t.Fatalf("%s: the message says too much: %q", tc.name, *resp.ErrorMessage)
		}
		c.expectClosed(5 * time.Second)
		if _, failed, _, _ := m.get(); failed != i+1 {
			t.Fatalf("%s: %d failed authentications counted, want %d", tc.name, failed, i+1)
		}
	}
	c := dialRaw(t, addr)
	if resp := c.loginPlain(2, "admin", "admin-secret"); resp.ErrorCode != 0 {
		t.Fatalf("a good login after the failures: error %d", resp.ErrorCode)
	}
}

// TestSASLUnsupportedMechanism: SaslHandshake for a mechanism the listener
// does not enable gets UNSUPPORTED_SASL_MECHANISM and the enabled list,
// then the connection closes.
func TestSASLUnsupportedMechanism(t *testing.T) {
	s := newSASLServer(t, 0, nil)
	c := dialRaw(t, s.Addrs()["SASL"])
	resp := c.handshake("SCRAM-SHA-512")
	if resp.ErrorCode != kerr.UnsupportedSaslMechanism.Code || strings.Join(resp.SupportedMechanisms, ",") != "PLAIN" {
		t.Fatalf("error %d mechanisms %v, want UNSUPPORTED_SASL_MECHANISM [PLAIN]", resp.ErrorCode, resp.SupportedMechanisms)
	}
	c.expectClosed(5 * time.Second)
}

// TestSASLRequestBeforeAuthCloses: before authentication only ApiVersions,
// SaslHandshake and SaslAuthenticate are taken; anything else closes the
// connection unanswered, before the handshake and between it and the
// authentication.
func TestSASLRequestBeforeAuthCloses(t *testing.T) {
	probe, got := principalProbe()
	m := &authCounts{}
	s := newSASLServer(t, 0, m, probe)
	addr := s.Addrs()["SASL"]

	c := dialRaw(t, addr)
	meta := kmsg.NewPtrMetadataRequest()
	meta.Version = 12
	c.send(1, meta)
	c.expectClosed(5 * time.Second)

	c = dialRaw(t, addr)
	c.handshake("PLAIN")
	c.send(2, heartbeat("g", "m"))
	c.expectClosed(5 * time.Second)
	select {
	case p := <-got:
		t.Fatalf("a request before authentication ran as %q", p)
	default:
	}
	if _, failed, _, _ := m.get(); failed != 2 {
		t.Fatalf("%d failed authentications counted, want 2", failed)
	}
	apiVersionsOK(t, addr)
}

// TestSASLAuthenticateBeforeHandshake: SaslAuthenticate first is
// ILLEGAL_SASL_STATE and closes the connection.
func TestSASLAuthenticateBeforeHandshake(t *testing.T) {
	s := newSASLServer(t, 0, nil)
	c := dialRaw(t, s.Addrs()["SASL"])
	resp := c.authenticate(1, plainToken("alice", "alice-secret"))
	if resp.ErrorCode != kerr.IllegalSaslState.Code {
		t.Fatalf("error %d, want ILLEGAL_SASL_STATE", resp.ErrorCode)
	}
	c.expectClosed(5 * time.Second)
}

// TestSASLLargeFrameBeforeAuthCloses: before authentication a size prefix
// above sasl.server.max.receive.size (a 1 GiB SaslAuthenticate, and a
// 1 MiB one under socket.request.max.bytes) closes the connection before
// anything of that size is allocated or read; the broker keeps serving.
func TestSASLLargeFrameBeforeAuthCloses(t *testing.T) {
	s := newSASLServer(t, 0, nil)
	addr := s.Addrs()["SASL"]
	for _, size := range []uint32{1 << 30, 1 << 20} {
		c := dialRaw(t, addr)
		c.handshake("PLAIN")
		var hdr [8]byte
		binary.BigEndian.PutUint32(hdr[:], size)
		binary.BigEndian.PutUint16(hdr[4:], 36) // SaslAuthenticate
		binary.BigEndian.PutUint16(hdr[6:], 2)
		c.write(hdr[:])
		c.expectClosed(5 * time.Second)
		s.reqMem.mu.Lock()
		used := s.reqMem.used
		s.reqMem.mu.Unlock()
		if used >= 1<<20 {
			t.Fatalf("size %d: %d bytes of request memory reserved", size, used)
		}
	}
	c := dialRaw(t, addr)
	if resp := c.loginPlain(2, "alice", "alice-secret"); resp.ErrorCode != 0 {
		t.Fatalf("login after the refused frames: error %d", resp.ErrorCode)
	}
}

// TestSASLOnPlaintextListener: on a listener without SASL, SaslHandshake
// and SaslAuthenticate are ILLEGAL_SASL_STATE (KafkaApis) and the
// connection stays.
func TestSASLOnPlaintextListener(t *testing.T) {
	s := newTestServer(t, Config{}, nil)
	c := dialRaw(t, s.plaintextAddr())
	if resp := c.handshake("PLAIN"); resp.ErrorCode != kerr.IllegalSaslState.Code {
		t.Fatalf("SaslHandshake: error %d, want ILLEGAL_SASL_STATE", resp.ErrorCode)
	}
	if resp := c.authenticate(2, plainToken("a", "b")); resp.ErrorCode != kerr.IllegalSaslState.Code {
		t.Fatalf("SaslAuthenticate: error %d, want ILLEGAL_SASL_STATE", resp.ErrorCode)
	}
	c.send(3, apiVersionsReq())
	av := kmsg.NewPtrApiVersionsResponse()
	av.Version = 3
	if c.readResp(av); av.ErrorCode != 0 {
		t.Fatalf("ApiVersions after: error %d", av.ErrorCode)
	}
}

// TestSASLPipelinedAfterAuthenticate: a request written together with the
// SaslAuthenticate that completes the login is read after it, so
// sasl.server.max.receive.size no longer applies to it (a 600 KB produce)
// and it runs as the user.
func TestSASLPipelinedAfterAuthenticate(t *testing.T) {
	got := make(chan string, 1)
	probe := api{key: 0, min: 3, max: 12, handle: func(_ *Server, ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
		got <- reqctx.From(ctx).Principal
		return kreq.(*kmsg.ProduceRequest).ResponseKind(), nil
	}}
	s := newSASLServer(t, 0, nil, probe)
	c := dialRaw(t, s.Addrs()["SASL"])
	c.handshake("PLAIN")
	produce := kmsg.NewPtrProduceRequest()
	produce.Version = 9
	produce.Acks = 1
	produce.TimeoutMillis = 1000
	topic := kmsg.NewProduceRequestTopic()
	topic.Topic = "t"
	part := kmsg.NewProduceRequestTopicPartition()
	part.Records = make([]byte, 600<<10)
	topic.Partitions = append(topic.Partitions, part)
	produce.Topics = append(produce.Topics, topic)
	c.write(append(encodeRequest(2, "raw", authReq(2, plainToken("bob", "bob-secret"))), encodeRequest(3, "raw", produce)...))
	resp := kmsg.NewPtrSASLAuthenticateResponse()
	resp.Version = 2
	if c.readResp(resp); resp.ErrorCode != 0 {
		t.Fatalf("SaslAuthenticate: error %d", resp.ErrorCode)
	}
	expectPrincipal(t, got, "User:bob")
	pr := kmsg.NewPtrProduceResponse()
	pr.Version = 9
	if corr := c.readResp(pr); corr != 3 {
		t.Fatalf("produce answer has correlation id %d", corr)
	}
}

// TestSASLReauthentication (KIP-368): with connections.max.reauth.ms the
// session lifetime comes back in SaslAuthenticate v1+; a
// re-authentication as the same user renews it, one as another user is
// refused and closes; a request after the session ended closes the
// connection.
func TestSASLReauthentication(t *testing.T) {
	probe, got := principalProbe()
	m := &authCounts{}
	s := newSASLServer(t, 1500*time.Millisecond, m, probe)
	addr := s.Addrs()["SASL"]

	c := dialRaw(t, addr)
	if resp := c.loginPlain(1, "alice", "alice-secret"); resp.ErrorCode != 0 || resp.SessionLifetimeMillis != 1500 {
		t.Fatalf("login: error %d lifetime %d, want 0 and 1500", resp.ErrorCode, resp.SessionLifetimeMillis)
	}
	if resp := c.loginPlain(2, "alice", "alice-secret"); resp.ErrorCode != 0 || resp.SessionLifetimeMillis != 1500 {
		t.Fatalf("re-authentication: error %d %v lifetime %d", resp.ErrorCode, resp.ErrorMessage, resp.SessionLifetimeMillis)
	}
	c.send(3, heartbeat("g", "m"))
	expectPrincipal(t, got, "User:alice")
	if _, _, reauth, _ := m.get(); reauth != 1 {
		t.Fatalf("%d re-authentications counted, want 1", reauth)
	}
	hb := kmsg.NewPtrHeartbeatResponse()
	hb.Version = 4
	c.readResp(hb)

	// At most one re-authentication a second (KafkaChannel).
	if resp := c.handshake("PLAIN"); resp.ErrorCode != kerr.IllegalSaslState.Code {
		t.Fatalf("a second re-authentication at once: error %d, want ILLEGAL_SASL_STATE", resp.ErrorCode)
	}
	time.Sleep(1100 * time.Millisecond)
	resp := c.loginPlain(2, "bob", "bob-secret")
	if resp.ErrorCode != kerr.SaslAuthenticationFailed.Code || resp.ErrorMessage == nil || !strings.Contains(*resp.ErrorMessage, "Cannot change principals") {
		t.Fatalf("re-authentication as another user: error %d %v", resp.ErrorCode, resp.ErrorMessage)
	}
	c.expectClosed(5 * time.Second)

	c = dialRaw(t, addr)
	c.loginPlain(1, "alice", "alice-secret")
	time.Sleep(1600 * time.Millisecond)
	c.send(4, heartbeat("g", "m"))
	c.expectClosed(5 * time.Second)
}

// TestSASLReauthPerMechanism: listener.name.<l>.<mechanism>.connections.max.reauth.ms
// overrides the listener's for its mechanism.
func TestSASLReauthPerMechanism(t *testing.T) {
	l := saslListener(time.Hour)
	l.SASL.MaxReauthBy = map[string]time.Duration{"PLAIN": 700 * time.Millisecond}
	s := newTestServer(t, Config{Listeners: []Listener{l}}, nil)
	c := dialRaw(t, s.Addrs()["SASL"])
	if resp := c.loginPlain(1, "alice", "alice-secret"); resp.SessionLifetimeMillis != 700 {
		t.Fatalf("lifetime %d, want 700", resp.SessionLifetimeMillis)
	}
}

// TestSASLReauthNotExpiring: without an expiring session a SaslHandshake on
// an authenticated connection is ILLEGAL_SASL_STATE and the connection
// stays.
func TestSASLReauthNotExpiring(t *testing.T) {
	probe, got := principalProbe()
	s := newSASLServer(t, 0, nil, probe)
	c := dialRaw(t, s.Addrs()["SASL"])
	c.loginPlain(2, "alice", "alice-secret")
	if resp := c.handshake("PLAIN"); resp.ErrorCode != kerr.IllegalSaslState.Code {
		t.Fatalf("SaslHandshake after login: error %d, want ILLEGAL_SASL_STATE", resp.ErrorCode)
	}
	c.send(3, heartbeat("g", "m"))
	expectPrincipal(t, got, "User:alice")
}

// TestSASLSSLPrincipal: on SASL_SSL the SASL principal wins over the
// client certificate's.
func TestSASLSSLPrincipal(t *testing.T) {
	probe, got := principalProbe()
	ca := tlstest.NewCA(t, "ca")
	l := saslListener(0)
	l.SecurityProtocol = SecurityProtocolSASLSSL
	l.TLS = tlstest.ServerConfig(ca.Issue(t, "broker"), ca.Pool())
	s := newTestServer(t, Config{Listeners: []Listener{l}}, nil, probe)
	c := dialTLS(t, s.Addrs()["SASL"], tlstest.ClientConfig(ca, ca.Issue(t, "carol")))
	if resp := c.loginPlain(2, "alice", "alice-secret"); resp.ErrorCode != 0 {
		t.Fatalf("login: error %d", resp.ErrorCode)
	}
	c.send(3, heartbeat("g", "m"))
	expectPrincipal(t, got, "User:alice")
}

// TestSASLKgoClient: franz-go's PLAIN mechanism logs in and its requests
// are served; with a wrong password its request fails with
// SASL_AUTHENTICATION_FAILED.
func TestSASLKgoClient(t *testing.T) {
	got := make(chan string, 16)
	probe := api{key: 3, min: 0, max: 12, handle: func(_ *Server, ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
		got <- reqctx.From(ctx).Principal
		return kreq.(*kmsg.MetadataRequest).ResponseKind(), nil
	}}
	s := newSASLServer(t, 0, nil, probe)
	addr := s.Addrs()["SASL"]
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, tc := range []struct {
		pass string
		want error
	}{{"alice-secret", nil}, {"wrong", kerr.SaslAuthenticationFailed}} {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RequestRetries(0),
			kgo.SASL(saslplain.Auth{User: "alice", Pass: tc.pass}.AsMechanism()))
		if err != nil {
			t.Fatal(err)
		}
		_, err = cl.Request(ctx, kmsg.NewPtrMetadataRequest())
		cl.Close()
		if tc.want == nil && err != nil {
			t.Fatalf("password %q: %v", tc.pass, err)
		}
		if tc.want != nil && !errors.Is(err, tc.want) {
			t.Fatalf("password %q: error %v, want %v", tc.pass, err, tc.want)
		}
	}
	expectPrincipal(t, got, "User:alice")
}

// TestSASLHandshakeV0RawTokens: after SaslHandshake v0 the tokens are raw
// size-prefixed frames both ways (Kafka before KIP-152, still served by
// Kafka 4.x); a good PLAIN token logs in, a bad one closes the connection
// unanswered, and a token above sasl.server.max.receive.size closes it too.
func TestSASLHandshakeV0RawTokens(t *testing.T) {
	probe, got := principalProbe()
	m := &authCounts{}
	s := newSASLServer(t, 0, m, probe)
	addr := s.Addrs()["SASL"]
	rawHandshake := func(c *rawClient) {
		req := handshakeReq("PLAIN")
		req.Version = 0
		c.send(1, req)
		resp := req.ResponseKind().(*kmsg.SASLHandshakeResponse)
		if c.readResp(resp); resp.ErrorCode != 0 {
			t.Fatalf("SaslHandshake v0: error %d", resp.ErrorCode)
		}
	}
	rawToken := func(c *rawClient, tok []byte) {
		c.write(append(binary.BigEndian.AppendUint32(nil, uint32(len(tok))), tok...))
	}

	c := dialRaw(t, addr)
	rawHandshake(c)
	rawToken(c, plainToken("alice", "alice-secret"))
	if reply := c.readFrame(5 * time.Second); len(reply) != 0 {
		t.Fatalf("PLAIN's raw reply: %q, want empty", reply)
	}
	c.send(3, heartbeat("g", "m"))
	expectPrincipal(t, got, "User:alice")

	c = dialRaw(t, addr)
	rawHandshake(c)
	rawToken(c, plainToken("alice", "wrong"))
	c.expectClosed(5 * time.Second)

	c = dialRaw(t, addr)
	rawHandshake(c)
	c.write(binary.BigEndian.AppendUint32(nil, 1<<20))
	c.expectClosed(5 * time.Second)
	if ok, failed, _, _ := m.get(); ok != 1 || failed != 2 {
		t.Fatalf("metrics: %d authenticated, %d failed; want 1, 2", ok, failed)
	}
}

// TestSASLFailedAuthenticationDelay: connection.failed.authentication.delay.ms
// holds a failed authentication's answer (and the close after it) back by
// at least the delay; a good login is not held.
func TestSASLFailedAuthenticationDelay(t *testing.T) {
	l := saslListener(0)
	l.SASL.FailedAuthDelay = 300 * time.Millisecond
	s := newTestServer(t, Config{Listeners: []Listener{l}}, nil)
	c := dialRaw(t, s.Addrs()["SASL"])
	c.handshake("PLAIN")
	start := time.Now()
	if resp := c.authenticate(2, plainToken("alice", "wrong")); resp.ErrorCode != kerr.SaslAuthenticationFailed.Code {
		t.Fatalf("error %d, want SASL_AUTHENTICATION_FAILED", resp.ErrorCode)
	}
	if waited := time.Since(start); waited < 300*time.Millisecond {
		t.Fatalf("the failure was answered after %v, before the 300ms delay", waited)
	}
	c.expectClosed(5 * time.Second)
	c = dialRaw(t, s.Addrs()["SASL"])
	if resp := c.loginPlain(2, "alice", "alice-secret"); resp.ErrorCode != 0 {
		t.Fatalf("login: error %d", resp.ErrorCode)
	}
}
