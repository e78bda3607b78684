package mirrormsg_test

import (
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// TestAPIs checks the table against DESIGN.md §4's list, moved by issue 32
// from 94-108 to 9400-9414 (written out again here, so a key changed in a
// schema has to be changed here too) and against the types: keys, names,
// versions, the kmsg interfaces kgo looks for.
func TestAPIs(t *testing.T) {
	design := map[int16]string{
		9400: "CreateMirror", 9401: "StartMirrorTopics", 9402: "StopMirrorTopics", 9403: "ResumeMirrorTopics",
		9404: "ListMirrors", 9405: "DescribeMirrors", 9406: "ReadMirrorStates", 9407: "WriteMirrorStates",
		9408: "PauseMirrorTopics", 9409: "DeleteMirror", 9411: "BumpLeaderEpochs",
		// Strait's own (issue 25): the SCRAM sync of a mirror.
		9412: "DescribeScramCredentialSecrets", 9413: "SyncScramCredentials",
		// Strait's own (issue 27): the promotion barrier's last group
		// offset sync.
		9414: "SyncMirrorGroupOffsets",
	}
	internal := map[string]bool{"SyncScramCredentials": true}
	admin := map[string]bool{
		"CreateMirror": true, "DeleteMirror": true, "StartMirrorTopics": true, "StopMirrorTopics": true,
		"PauseMirrorTopics": true, "ResumeMirrorTopics": true, "BumpLeaderEpochs": true,
	}
	if len(mirrormsg.APIs) != len(design) {
		t.Fatalf("%d APIs, DESIGN.md names %d", len(mirrormsg.APIs), len(design))
	}
	prev := int16(-1)
	for _, a := range mirrormsg.APIs {
		if a.Key <= prev {
			t.Errorf("APIs not sorted by key: %d after %d", a.Key, prev)
		}
		prev = a.Key
		if design[a.Key] != a.Name {
			t.Errorf("key %d is %q, DESIGN.md says %q", a.Key, a.Name, design[a.Key])
		}
		s := schemaOf(t, a.Name+"Request")
		if a.Min != s.ValidVersions.Min || a.Max != s.ValidVersions.Max || a.Min != 0 {
			t.Errorf("%s: versions %d-%d, schema %d-%d", a.Name, a.Min, a.Max, s.ValidVersions.Min, s.ValidVersions.Max)
		}
		req, resp := a.NewRequest(), a.NewResponse()
		if req.Key() != a.Key || resp.Key() != a.Key || req.MaxVersion() != a.Max || resp.MaxVersion() != a.Max {
			t.Errorf("%s: request key %d max %d, response key %d max %d", a.Name, req.Key(), req.MaxVersion(), resp.Key(), resp.MaxVersion())
		}
		if msgName(req) != a.Name+"Request" || msgName(resp) != a.Name+"Response" {
			t.Errorf("%s: types %s, %s", a.Name, msgName(req), msgName(resp))
		}
		for v := a.Min; v <= a.Max; v++ {
			req.SetVersion(v)
			if req.GetVersion() != v {
				t.Errorf("%s: SetVersion(%d) then GetVersion %d", a.Name, v, req.GetVersion())
			}
			if rk := req.ResponseKind(); reflect.TypeOf(rk) != reflect.TypeOf(resp) || rk.GetVersion() != v {
				t.Errorf("%s v%d: ResponseKind %T v%d", a.Name, v, rk, rk.GetVersion())
			}
			resp.SetVersion(v)
			if rk := resp.RequestKind(); reflect.TypeOf(rk) != reflect.TypeOf(req) || rk.GetVersion() != v {
				t.Errorf("%s v%d: RequestKind %T v%d", a.Name, v, rk, rk.GetVersion())
			}
			if !req.IsFlexible() || !resp.IsFlexible() {
				t.Errorf("%s v%d: every version is flexible (flexibleVersions 0+)", a.Name, v)
			}
		}
		if _, ok := req.(kmsg.AdminRequest); ok != admin[a.Name] || a.Admin != admin[a.Name] {
			t.Errorf("%s: AdminRequest %t, table %t, want %t", a.Name, ok, a.Admin, admin[a.Name])
		}
		if a.Internal != internal[a.Name] {
			t.Errorf("%s: Internal %t", a.Name, a.Internal)
		}
		if _, ok := resp.(kmsg.ThrottleResponse); !ok {
			t.Errorf("%s: the response has ThrottleTimeMs but is not a kmsg.ThrottleResponse", a.Name)
		}
		if _, ok := req.(kmsg.TimeoutRequest); ok != (a.Name == "StartMirrorTopics" || a.Name == "SyncMirrorGroupOffsets") {
			t.Errorf("%s: TimeoutRequest %t", a.Name, ok)
		}
		if got := mirrormsg.RequestForKey(a.Key); reflect.TypeOf(got) != reflect.TypeOf(req) {
			t.Errorf("RequestForKey(%d) = %T", a.Key, got)
		}
		if got := mirrormsg.ResponseForKey(a.Key); reflect.TypeOf(got) != reflect.TypeOf(resp) {
			t.Errorf("ResponseForKey(%d) = %T", a.Key, got)
		}
		if mirrormsg.NameForKey(a.Key) != a.Name {
			t.Errorf("NameForKey(%d) = %q", a.Key, mirrormsg.NameForKey(a.Key))
		}
	}
	// 94-108 are the old keys (94 is upstream's UnregisterController).
	for _, k := range []int16{-1, 0, 18, 93, 94, 100, 104, 108, 109, 9399, 9410, 9415} {
		if mirrormsg.RequestForKey(k) != nil || mirrormsg.ResponseForKey(k) != nil || mirrormsg.NameForKey(k) != "" {
			t.Errorf("key %d is not a mirror RPC but is looked up", k)
		}
	}
}

func TestThrottleAndTimeout(t *testing.T) {
	r := mirrormsg.NewPtrStartMirrorTopicsRequest()
	r.SetTimeout(1234)
	if r.Timeout() != 1234 || r.TimeoutMs != 1234 {
		t.Errorf("timeout %d, TimeoutMs %d", r.Timeout(), r.TimeoutMs)
	}
	resp := mirrormsg.NewPtrDeleteMirrorResponse()
	resp.SetThrottle(7)
	if ms, after := resp.Throttle(); ms != 7 || !after || resp.ThrottleTimeMs != 7 {
		t.Errorf("throttle %d after %t, ThrottleTimeMs %d", ms, after, resp.ThrottleTimeMs)
	}
}

// TestMaxVersions checks the kgo version table: every mirror key at its
// max, the standard keys left as they were.
func TestMaxVersions(t *testing.T) {
	vs := mirrormsg.MaxVersions(nil)
	for _, a := range mirrormsg.APIs {
		if v, ok := vs.LookupMaxKeyVersion(a.Key); !ok || v != a.Max {
			t.Errorf("%s: max %d (%t), want %d", a.Name, v, ok, a.Max)
		}
	}
	stable := kversion.Stable()
	for _, k := range []int16{0, 1, 3, 18, 19} {
		want, _ := stable.LookupMaxKeyVersion(k)
		if got, _ := vs.LookupMaxKeyVersion(k); got != want {
			t.Errorf("key %d: max %d, kversion.Stable has %d", k, got, want)
		}
	}
}
