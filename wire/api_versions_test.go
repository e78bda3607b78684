package wire

import (
	"bytes"
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestApiVersionsKadm(t *testing.T) {
	md, hb := metadataStandIn(), heartbeatStandIn(newProbe())
	s := newTestServer(t, Config{}, nil, md, hb)
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.plaintextAddr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	vs, err := kadm.NewClient(cl).ApiVersions(ctx)
	if err != nil {
		t.Fatalf("kadm ApiVersions: %v", err)
	}
	v, ok := vs[1]
	if !ok || v.Err != nil {
		t.Fatalf("node 1: present %t, err %v", ok, v.Err)
	}
	want := expectedRanges(md, hb)
	got := map[int16][2]int16{}
	v.EachKeySorted(func(key, minV, maxV int16) { got[key] = [2]int16{minV, maxV} })
	if len(got) != len(want) {
		t.Fatalf("advertised %v, want %v", got, want)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("key %d: advertised %v, want %v", k, got[k], w)
		}
	}
	// kgo negotiated Metadata through the advertised range: flexible
	// request header v2 in, response header v1 out.
	if v.Raw().Version != 4 {
		t.Errorf("kadm's ApiVersions went out at v%d, want v4", v.Raw().Version)
	}
}

func TestApiVersionsEveryVersion(t *testing.T) {
	hb := heartbeatStandIn(newProbe())
	s := newTestServer(t, Config{}, nil, hb)
	c := dialRaw(t, s.plaintextAddr())
	want := expectedKeys(hb)
	for v := int16(0); v <= 4; v++ {
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = v
		req.ClientSoftwareName, req.ClientSoftwareVersion = "strait-test", "1.2.3-rc.1"
		c.send(int32(100+v), req)
		resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
		if corr := c.readResp(resp); corr != int32(100+v) {
			t.Fatalf("v%d: correlation id %d, want %d", v, corr, 100+v)
		}
		if resp.ErrorCode != 0 || resp.ThrottleMillis != 0 {
			t.Fatalf("v%d: error %d throttle %d", v, resp.ErrorCode, resp.ThrottleMillis)
		}
		if len(resp.ApiKeys) != len(want) {
			t.Fatalf("v%d: keys %+v, want %+v", v, resp.ApiKeys, want)
		}
		for i := range want {
			g := resp.ApiKeys[i]
			if g.ApiKey != want[i].ApiKey || g.MinVersion != want[i].MinVersion || g.MaxVersion != want[i].MaxVersion {
				t.Fatalf("v%d: key %d is %+v, want %+v", v, i, g, want[i])
			}
		}
	}
}

func TestApiVersionsInvalidSoftwareName(t *testing.T) {
	s := newTestServer(t, Config{}, nil)
	c := dialRaw(t, s.plaintextAddr())
	for i, tc := range []struct{ name, version string }{
		{"", "1.0"}, {"-kgo", "1.0"}, {"kgo", "1.0."}, {"k go", "1"}, {"kgo", "1_0"},
	} {
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = 3
		req.ClientSoftwareName, req.ClientSoftwareVersion = tc.name, tc.version
		c.send(int32(i), req)
		resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
		c.readResp(resp)
		if resp.ErrorCode != kerr.InvalidRequest.Code || len(resp.ApiKeys) != 0 {
			t.Errorf("name %q version %q: error %d with %d keys, want INVALID_REQUEST (%d) and none",
				tc.name, tc.version, resp.ErrorCode, len(resp.ApiKeys), kerr.InvalidRequest.Code)
		}
	}
	// v0-2 carry no software name: nothing to validate.
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 2
	c.send(9, req)
	resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
	c.readResp(resp)
	if resp.ErrorCode != 0 {
		t.Fatalf("v2: error %d", resp.ErrorCode)
	}
}

// A version above ours is answered in v0 with UNSUPPORTED_VERSION and our
// ApiVersions range, whatever its body, and the connection stays usable.
func TestApiVersionsUnsupportedVersionFallback(t *testing.T) {
	s := newTestServer(t, Config{}, nil, heartbeatStandIn(newProbe()))
	c := dialRaw(t, s.plaintextAddr())
	// size | key 18 | version | corr | client id "x" | empty tags | garbage body
	for _, version := range []int16{5, 127, -1} {
		frame := []byte{0, 0, 0, 0, 0, 18}
		frame = binary.BigEndian.AppendUint16(frame, uint16(version))
		frame = append(frame, 0, 0, 0x30, 0x39, 0, 1, 'x', 0, 0xde, 0xad, 0xbe, 0xef)
		binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
		c.write(frame)
		got := c.readFrame(5 * time.Second)
		want := []byte{
			0, 0, 0x30, 0x39, // correlation id 12345, header v0
			0, 35, // UNSUPPORTED_VERSION
			0, 0, 0, 1, // one key:
			0, 18, 0, 0, 0, 4, // ApiVersions v0-4
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("v%d: response % x, want % x", version, got, want)
		}
	}
	apiVersionsOnConn(t, c)
}

// apiVersionsOnConn sends ApiVersions v4 on c and returns its answer,
// failing the test unless it is answered without an error.
func apiVersionsOnConn(t *testing.T, c *rawClient) *kmsg.ApiVersionsResponse {
	t.Helper()
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 4
	req.ClientSoftwareName, req.ClientSoftwareVersion = "raw", "1"
	c.send(77, req)
	resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
	if corr := c.readResp(resp); corr != 77 || resp.ErrorCode != 0 {
		t.Fatalf("follow-up ApiVersions: corr %d error %d", corr, resp.ErrorCode)
	}
	return resp
}
