package wire

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// mirrorClient is a kgo client that knows the mirror keys, as every
// mirror client must be built (mirrormsg.MaxVersions).
func mirrorClient(t *testing.T, addr string) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(addr),
		kgo.MaxVersions(mirrormsg.MaxVersions(nil)),
		kgo.RetryTimeout(2*time.Second),
	)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func TestMirrorCasesCoverEveryKey(t *testing.T) {
	cases := mirrorCases()
	apis := servedMirrorAPIs()
	if len(cases) != len(apis) {
		t.Fatalf("%d cases for %d served mirror APIs", len(cases), len(apis))
	}
	for i, a := range apis {
		if k := cases[i].req().Key(); k != a.Key || cases[i].name != a.Name || cases[i].resp().Key() != a.Key {
			t.Errorf("case %d is %s (key %d), want %s (key %d)", i, cases[i].name, k, a.Name, a.Key)
		}
	}
}

// Each mirror RPC goes from a kgo client over a real socket (flexible
// request header v2 in, response header v1 out) to the MirrorService,
// which sees exactly the request sent, and its response comes back
// unchanged. Admin requests reach this broker as the controller named in
// Metadata. DescribeScramCredentialSecrets needs an encrypted listener:
// TestScramSecretsNeedEncryptedListener sends it.
func TestMirrorRPCsOverKgo(t *testing.T) {
	var cases []mirrorCase
	for _, c := range mirrorCases() {
		if c.name != "DescribeScramCredentialSecrets" {
			cases = append(cases, c)
		}
	}
	svc := newMirrorStandIn(cases)
	s := newTestServerSvc(t, Config{}, Services{Mirror: svc}, nil, metadataStandIn())
	cl := mirrorClient(t, s.plaintextAddr())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	for _, c := range cases {
		req := c.req()
		resp, err := cl.Request(ctx, req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if want := c.resp(); !reflect.DeepEqual(resp, want) {
			t.Errorf("%s: client got %+v, service answered %+v", c.name, resp, want)
		}
	}
	got := svc.received()
	if len(got) != len(cases) {
		t.Fatalf("the service handled %d requests, want %d", len(got), len(cases))
	}
	for i, c := range cases {
		if want := c.req(); !reflect.DeepEqual(got[i], want) {
			t.Errorf("%s: service received %+v, client sent %+v", c.name, got[i], want)
		}
	}
}

// ApiVersions lists the mirror keys, at mirrorRanges, exactly when the
// server has a MirrorService; every other key is the same either way.
func TestMirrorKeysAdvertisedOnlyWithService(t *testing.T) {
	for _, withMirror := range []bool{false, true} {
		svc := Services{}
		if withMirror {
			svc.Mirror = &mirrorStandIn{}
		}
		s := newTestServerSvc(t, Config{}, svc, nil)
		resp := apiVersionsOnConn(t, dialRaw(t, s.plaintextAddr()))
		want := expectedKeysFor(withMirror)
		if resp.ErrorCode != 0 || !reflect.DeepEqual(resp.ApiKeys, want) {
			t.Fatalf("mirror service %t: error %d, keys %+v, want %+v", withMirror, resp.ErrorCode, resp.ApiKeys, want)
		}
		mirrorKeys := 0
		for _, k := range resp.ApiKeys {
			if _, ok := mirrormsg.Lookup(k.ApiKey); ok {
				mirrorKeys++
			}
		}
		if wantN := map[bool]int{false: 0, true: 13}[withMirror]; mirrorKeys != wantN {
			t.Fatalf("mirror service %t: %d mirror keys advertised, want %d", withMirror, mirrorKeys, wantN)
		}
	}
}

// kadm sees the same list: what a Kafka tool would show.
func TestMirrorKeysKadm(t *testing.T) {
	md := metadataStandIn()
	s := newTestServerSvc(t, Config{}, Services{Mirror: &mirrorStandIn{}}, nil, md)
	cl := mirrorClient(t, s.plaintextAddr())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	vs, err := kadm.NewClient(cl).ApiVersions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	v := vs[1]
	if v.Err != nil {
		t.Fatal(v.Err)
	}
	got := map[int16][2]int16{}
	v.EachKeySorted(func(key, minV, maxV int16) { got[key] = [2]int16{minV, maxV} })
	if want := expectedRangesFor(true, md); !reflect.DeepEqual(got, want) {
		t.Fatalf("kadm sees %v, want %v", got, want)
	}
}

// Without a MirrorService a kgo client does not even send a mirror
// request: the broker did not advertise the key.
func TestMirrorKgoWithoutService(t *testing.T) {
	s := newTestServerSvc(t, Config{}, Services{}, nil, metadataStandIn())
	cl := mirrorClient(t, s.plaintextAddr())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, c := range mirrorCases() {
		_, err := cl.Request(ctx, c.req())
		if err == nil || !strings.Contains(err.Error(), "broker is too old") {
			t.Errorf("%s without a mirror service: err %v, want kgo's broker-too-old", c.name, err)
		}
	}
	if ctx.Err() != nil {
		t.Fatal("the refusals took the whole timeout")
	}
}

// Without a MirrorService a raw mirror request is refused exactly as an
// unknown key is (Kafka closes the connection: SocketServer's
// parseRequestHeader throws for an API the node has not enabled), for
// each mirror key; the server keeps serving everyone else.
func TestMirrorKeyWithoutServiceIsUnknown(t *testing.T) {
	s := newTestServerSvc(t, Config{}, Services{}, nil)
	addr := s.plaintextAddr()
	bystander := dialRaw(t, addr)
	for _, mc := range mirrorCases() {
		t.Run(mc.name, func(t *testing.T) {
			c := dialRaw(t, addr)
			c.send(1, mc.req())
			c.expectClosed(5 * time.Second)
			apiVersionsOnConn(t, bystander)
		})
	}
	// The refusal is the unknown-key one, decided on the header.
	for _, mc := range mirrorCases() {
		req := mc.req()
		for _, svc := range []Services{{}, {Mirror: &mirrorStandIn{}}} {
			r := &request{hdr: requestHeader{key: req.Key(), version: 0}}
			r.resolve(newAPITable(svc))
			switch {
			case svc.Mirror == nil && !errors.Is(r.err, ErrUnknownAPIKey):
				t.Errorf("%s without a service: %v, want %v", mc.name, r.err, ErrUnknownAPIKey)
			case svc.Mirror != nil && (r.err != nil || reflect.TypeOf(r.kreq) != reflect.TypeOf(req)):
				t.Errorf("%s with a service: err %v, decodes as %T", mc.name, r.err, r.kreq)
			}
		}
	}
}

// The mirror RPCs are flexible at v0 although kmsg knows none of them: the
// header parser must still skip their tag section.
func TestMirrorRequestHeader(t *testing.T) {
	for _, mc := range mirrorCases() {
		req := mc.req()
		frame := encodeRequest(42, "hdr", req)[4:]
		h, err := parseHeader(frame, requestFlexible)
		if err != nil {
			t.Fatalf("%s: %v", mc.name, err)
		}
		if h.key != req.Key() || h.version != 0 || h.correlationID != 42 || h.clientID != "hdr" || !bytes.Equal(h.body, req.AppendTo(nil)) {
			t.Fatalf("%s: header %+v, body % x, want % x", mc.name, h, h.body, req.AppendTo(nil))
		}
		if got := NameForKey(req.Key()); got != mc.name {
			t.Errorf("NameForKey(%d) = %q, want %q", req.Key(), got, mc.name)
		}
	}
}

// Malformed mirror requests close their own connection, as any request
// that cannot be decoded does, without reaching the service; requests
// before them are answered and the server keeps serving.
func TestMirrorBadInput(t *testing.T) {
	cases := mirrorCases()
	svc := newMirrorStandIn(cases)
	s := newTestServerSvc(t, Config{}, Services{Mirror: svc}, nil)
	addr := s.plaintextAddr()
	bystander := dialRaw(t, addr)

	frame := func(body ...byte) []byte {
		return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
	}
	// header(key) is a flexible v0 request header: key, version 0,
	// correlation id 1, client id "x", no tags.
	header := func(key int16) []byte {
		return append(binary.BigEndian.AppendUint16(nil, uint16(key)), 0, 0, 0, 0, 0, 1, 0, 1, 'x', 0)
	}
	create := encodeRequest(1, "x", cases[0].req())
	listMirrors := binary.BigEndian.AppendUint16(nil, uint16(mirrormsg.KeyListMirrors))
	for _, tc := range []struct {
		name  string
		bytes []byte
	}{
		{"garbage body", frame(append(header(mirrormsg.KeyCreateMirror), 0xde, 0xad, 0xbe, 0xef)...)},
		{"empty body", frame(header(mirrormsg.KeyDeleteMirror)...)},
		{"body one byte short", frame(create[4 : len(create)-1]...)},
		{"a byte after the body", frame(append(bytes.Clone(create[4:]), 0)...)},
		{"array length bomb", frame(append(header(mirrormsg.KeyDescribeMirrors), 0xff, 0xff, 0xff, 0xff, 0x0f, 0)...)},
		{"null where the schema has none", frame(append(header(mirrormsg.KeyStartMirrorTopics), 1, 0, 0, 0, 0, 0, 0)...)},
		{"flexible header without its tag section", frame(append(listMirrors, 0, 0, 0, 0, 0, 1, 0, 1, 'x')...)},
		{"version above the registered v0", frame(append(listMirrors, 0, 1, 0, 0, 0, 1, 0, 1, 'x', 0, 0)...)},
		{"ApiVersions, then a corrupt DescribeMirrors", append(
			encodeRequest(5, "x", kmsg.NewPtrApiVersionsRequest()),
			frame(append(header(mirrormsg.KeyDescribeMirrors), 0x7f)...)...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dialRaw(t, addr)
			c.write(tc.bytes)
			if strings.HasPrefix(tc.name, "ApiVersions") {
				resp := kmsg.NewPtrApiVersionsResponse()
				if corr := c.readResp(resp); corr != 5 || resp.ErrorCode != 0 {
					t.Fatalf("the request before the bad one: corr %d error %d", corr, resp.ErrorCode)
				}
			}
			c.expectClosed(5 * time.Second)
			apiVersionsOnConn(t, bystander)
		})
	}
	if n := len(svc.received()); n != 0 {
		t.Fatalf("the service handled %d malformed requests", n)
	}

	// The well-formed ones still work on a fresh connection.
	c := dialRaw(t, addr)
	c.send(9, cases[5].req())
	resp := mirrormsg.NewPtrDescribeMirrorsResponse()
	if corr := c.readResp(resp); corr != 9 || !reflect.DeepEqual(resp, cases[5].resp()) {
		t.Fatalf("DescribeMirrors after the bad input: corr %d, %+v", corr, resp)
	}
}

// A MirrorService that returns a nil response fails only that request's
// connection; the server keeps running.
func TestMirrorNilResponse(t *testing.T) {
	svc := &mirrorStandIn{} // nothing canned: every answer is nil
	s := newTestServerSvc(t, Config{}, Services{Mirror: svc}, nil)
	c := dialRaw(t, s.plaintextAddr())
	c.send(1, mirrormsg.NewPtrListMirrorsRequest())
	c.expectClosed(5 * time.Second)
	if n := len(svc.received()); n != 1 {
		t.Fatalf("the service handled %d requests, want 1", n)
	}
	apiVersionsOK(t, s.plaintextAddr())
}

// Key 94 was CreateMirror's until issue 32; upstream has since given it to
// UnregisterController (KIP-1312), a controller-only API that a Kafka
// broker does not advertise on a client listener. With or without a
// MirrorService, Strait neither advertises 94 nor decodes it: a client
// sending UnregisterController gets the unknown-key refusal (the
// connection closed) instead of a CreateMirror decoding its bytes.
func TestKey94IsUnknown(t *testing.T) {
	unregister := kmsg.NewPtrUnregisterControllerRequest()
	if unregister.Key() != 94 {
		t.Fatalf("kmsg's UnregisterController is key %d", unregister.Key())
	}
	for _, svc := range []Services{{}, {Mirror: &mirrorStandIn{}}} {
		r := &request{hdr: requestHeader{key: 94, version: 0}}
		r.resolve(newAPITable(svc))
		if !errors.Is(r.err, ErrUnknownAPIKey) {
			t.Errorf("mirror service %t: key 94 resolves to %T, err %v; want %v", svc.Mirror != nil, r.kreq, r.err, ErrUnknownAPIKey)
		}
		if mirrormsg.RequestForKey(94) != nil {
			t.Errorf("mirrormsg still decodes key 94")
		}
	}
	s := newTestServerSvc(t, Config{}, Services{Mirror: &mirrorStandIn{}}, nil, metadataStandIn())
	addr := s.plaintextAddr()
	bystander := dialRaw(t, addr)
	for _, k := range apiVersionsOnConn(t, bystander).ApiKeys {
		if k.ApiKey == 94 {
			t.Fatalf("ApiVersions advertises key 94 (v%d-%d)", k.MinVersion, k.MaxVersion)
		}
	}
	c := dialRaw(t, addr)
	c.send(1, unregister)
	c.expectClosed(5 * time.Second)
	apiVersionsOnConn(t, bystander)
}
