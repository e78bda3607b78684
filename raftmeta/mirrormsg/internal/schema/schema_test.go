package schema

import (
	"math"
	"strings"
	"testing"
)

func TestParseVersions(t *testing.T) {
	for in, want := range map[string]Versions{
		"0": {0, 0}, "0+": {0, math.MaxInt16}, "3-7": {3, 7}, "none": None, "": None,
	} {
		got, err := ParseVersions(in)
		if err != nil || got != want {
			t.Errorf("ParseVersions(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"x", "-1", "3-1", "1+2", "99999"} {
		if _, err := ParseVersions(in); err == nil {
			t.Errorf("ParseVersions(%q) accepted", in)
		}
	}
}

func TestGoName(t *testing.T) {
	for in, want := range map[string]string{
		"TopicId": "TopicID", "partitionIndex": "PartitionIndex", "SourceClusterId": "SourceClusterID",
		"ThrottleTimeMs": "ThrottleTimeMs", "Identity": "Identity",
	} {
		if got := GoName(in); got != want {
			t.Errorf("GoName(%q) = %q, want %q", in, got, want)
		}
	}
}

const base = `// a comment
{ "apiKey": 1, "type": "request", "name": "XRequest", "validVersions": "0", "flexibleVersions": "0+",
  "fields": [ %s ] }`

// TestParseRejects checks that what the generator cannot encode correctly
// is an error, not a silently wrong type.
func TestParseRejects(t *testing.T) {
	for name, field := range map[string]string{
		"unknown key":            `{ "name": "A", "type": "int32", "versions": "0+", "nullableVersion": "0+" }`,
		"unsupported type":       `{ "name": "A", "type": "float32", "versions": "0+" }`,
		"nullable int":           `{ "name": "A", "type": "int32", "versions": "0+", "nullableVersions": "0+" }`,
		"tag without versions":   `{ "name": "A", "type": "int32", "versions": "0+", "tag": 0 }`,
		"versions without tag":   `{ "name": "A", "type": "int32", "versions": "0+", "taggedVersions": "0+" }`,
		"bad int default":        `{ "name": "A", "type": "int8", "versions": "0+", "default": "300" }`,
		"null default":           `{ "name": "A", "type": "string", "versions": "0+", "default": "null" }`,
		"struct without fields":  `{ "name": "A", "type": "[]S", "versions": "0+" }`,
		"no versions":            `{ "name": "A", "type": "int32" }`,
		"duplicate tag":          `{ "name": "A", "type": "int32", "versions": "0+", "taggedVersions": "0+", "tag": 0 }, { "name": "B", "type": "int32", "versions": "0+", "taggedVersions": "0+", "tag": 0 }`,
		"duplicate name":         `{ "name": "A", "type": "int32", "versions": "0+" }, { "name": "a", "type": "int32", "versions": "0+" }`,
		"partly nullable string": `{ "name": "A", "type": "string", "versions": "0+", "nullableVersions": "1+" }`,
	} {
		if _, err := Parse([]byte(strings.Replace(base, "%s", field, 1))); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	m, err := Parse([]byte(strings.Replace(base, "%s", `{ "name": "A", "type": "int32", "versions": "0+", "default": -1 }`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if m.Fields[0].Default != "-1" || len(m.Comment) != 1 || m.Comment[0] != "a comment" {
		t.Errorf("parsed %+v, comment %q", m.Fields[0], m.Comment)
	}
}

// TestSchemas parses the package's schemas and pairs them: 14 RPCs.
func TestSchemas(t *testing.T) {
	msgs, err := ParseDir("../../testdata/schemas")
	if err != nil {
		t.Fatal(err)
	}
	rpcs, err := Pair(msgs)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 28 || len(rpcs) != 14 {
		t.Fatalf("%d schemas in %d RPCs, want 28 in 14", len(msgs), len(rpcs))
	}
}
