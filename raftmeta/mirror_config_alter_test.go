package raftmeta

import (
	"context"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestIncrementalAlterMirrorConfigs: a mirror's configs are altered as a
// MIRROR config resource (`strait mirror start --include/--exclude`, the
// syncer's filters): APPEND and SUBTRACT on the LIST keys from their
// defaults, SET and DELETE, validated as CreateMirror validates them.
func TestIncrementalAlterMirrorConfigs(t *testing.T) {
	c, log := newMirrorController(t, Config{}, 1)
	ctx := context.Background()
	mustCreateMirror(t, c, "east")
	mirrorT := kmsg.ConfigResourceType(ConfigResourceMirror)

	steps := []struct {
		ops  []op
		want string
	}{
		{[]op{{"mirror.topics.include", appendOp, s("orders.*")}}, "bootstrap.servers=source:9092 mirror.topics.include=orders.*"},
		{[]op{{"mirror.topics.include", appendOp, s("pay,orders.*")}}, "bootstrap.servers=source:9092 mirror.topics.include=orders.*,pay"},
		// APPEND to an unset LIST starts from its default (__.*).
		{[]op{{"mirror.topics.exclude", appendOp, s("tmp-.*")}}, "bootstrap.servers=source:9092 mirror.topics.exclude=__.*,tmp-.* mirror.topics.include=orders.*,pay"},
		{[]op{{"mirror.topics.include", subtract, s("orders.*")}, {"mirror.metadata.refresh.interval.ms", set, s("500")}},
			"bootstrap.servers=source:9092 mirror.metadata.refresh.interval.ms=500 mirror.topics.exclude=__.*,tmp-.* mirror.topics.include=pay"},
		{[]op{{"mirror.topics.exclude", del, nil}}, "bootstrap.servers=source:9092 mirror.metadata.refresh.interval.ms=500 mirror.topics.include=pay"},
	}
	for i, st := range steps {
		resp := c.IncrementalAlterConfigs(ctx, incReq(false, incRes(mirrorT, "east", st.ops...)))
		if r := resp.Resources[0]; r.ErrorCode != 0 {
			t.Fatalf("step %d: %s %s", i, codeName(r.ErrorCode), deref(r.ErrorMessage))
		}
		if got := configsOf(log.Image(), ConfigResourceMirror, "east"); got != st.want {
			t.Fatalf("step %d: configs %q, want %q", i, got, st.want)
		}
	}

	for _, tc := range []struct {
		name, mirror string
		ops          []op
		code, msg    string
	}{
		{"unknown mirror", "west", []op{{"mirror.topics.include", set, s("x")}}, "UNKNOWN_CLUSTER_MIRROR", "Cluster mirror 'west' does not exist."},
		{"bad regex", "east", []op{{"mirror.topics.include", appendOp, s("(")}}, "INVALID_CONFIG", "mirror config mirror.topics.include"},
		{"unknown key", "east", []op{{"retention.ms", set, s("1")}}, "INVALID_CONFIG", "Unknown mirror config name: retention.ms"},
		{"required key", "east", []op{{"bootstrap.servers", del, nil}}, "INVALID_CONFIG", "Missing required mirror config bootstrap.servers"},
		{"not a list", "east", []op{{"mirror.metadata.refresh.interval.ms", appendOp, s("1")}}, "INVALID_CONFIG", "because its type is not LIST"},
		{"bad interval", "east", []op{{"mirror.metadata.refresh.interval.ms", set, s("0")}}, "INVALID_CONFIG", "at least 1"},
	} {
		resp := c.IncrementalAlterConfigs(ctx, incReq(false, incRes(mirrorT, tc.mirror, tc.ops...)))
		r := resp.Resources[0]
		if got := mirrorCode(r.ErrorCode); got != tc.code || !strings.Contains(deref(r.ErrorMessage), tc.msg) {
			t.Errorf("%s: %s %q, want %s containing %q", tc.name, got, deref(r.ErrorMessage), tc.code, tc.msg)
		}
	}
	if got, want := configsOf(log.Image(), ConfigResourceMirror, "east"), "bootstrap.servers=source:9092 mirror.metadata.refresh.interval.ms=500 mirror.topics.include=pay"; got != want {
		t.Fatalf("failed alters changed the configs: %q, want %q", got, want)
	}

	// The legacy AlterConfigs replaces the whole set, validated the same.
	legacy := c.AlterConfigs(ctx, alterReq(false, alterRes(mirrorT, "east", s("bootstrap.servers"), s("other:9092"))))
	if r := legacy.Resources[0]; r.ErrorCode != 0 {
		t.Fatalf("AlterConfigs: %s %s", codeName(r.ErrorCode), deref(r.ErrorMessage))
	}
	if got := configsOf(log.Image(), ConfigResourceMirror, "east"); got != "bootstrap.servers=other:9092" {
		t.Fatalf("after AlterConfigs: %q", got)
	}
	legacy = c.AlterConfigs(ctx, alterReq(false, alterRes(mirrorT, "east", s("mirror.topics.include"), s("x"))))
	if r := legacy.Resources[0]; mirrorCode(r.ErrorCode) != "INVALID_CONFIG" || !strings.Contains(deref(r.ErrorMessage), "bootstrap.servers") {
		t.Fatalf("AlterConfigs without bootstrap.servers: %s %s", mirrorCode(r.ErrorCode), deref(r.ErrorMessage))
	}
}
