// Package schema reads Kafka message schemas, the JSON files of Apache
// Kafka's clients/src/main/resources/common/message (with their "//" line
// comments), for the mirror RPCs of KIP-1279. The generator (internal/gen)
// turns them into the Go types of package mirrormsg, and the tests of
// mirrormsg use them to build values and check the generated code.
//
// Only what the mirror schemas use is supported: the primitive types bool,
// int8, int16, int32, int64, uuid, string and bytes, arrays of those and of
// structs, nullable strings and arrays, tagged fields and defaults. Anything
// else is an error rather than a silent mis-encoding.
package schema

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Message is one request or response schema.
type Message struct {
	APIKey           int16
	Type             string // "request" or "response"
	Listeners        []string
	Name             string // e.g. "CreateMirrorRequest"
	ValidVersions    Versions
	FlexibleVersions Versions
	Fields           []*Field
	// Comment is the file's leading "//" comment: where the schema comes
	// from and what Strait changed.
	Comment []string
}

// Field is one field of a message or of a nested struct.
type Field struct {
	Name             string // as in the schema, e.g. "TopicId", "partitionIndex"
	Type             string // e.g. "int32", "string", "[]string", "[]TopicData"
	Versions         Versions
	NullableVersions Versions
	TaggedVersions   Versions
	Tag              int // -1 when the field is not tagged
	Default          string
	About            string
	Fields           []*Field // the struct's fields when Type is []Struct
}

// Versions is an inclusive version range; Empty for "none" or unset.
type Versions struct{ Min, Max int16 }

// None is the empty range.
var None = Versions{Min: 0, Max: -1}

// Empty reports whether the range holds no version.
func (v Versions) Empty() bool { return v.Max < v.Min }

// Contains reports whether version is in the range.
func (v Versions) Contains(version int16) bool { return version >= v.Min && version <= v.Max }

// Covers reports whether every version of o is in v.
func (v Versions) Covers(o Versions) bool {
	return o.Empty() || (!v.Empty() && v.Min <= o.Min && o.Max <= v.Max)
}

// Intersect returns the versions in both ranges.
func (v Versions) Intersect(o Versions) Versions {
	r := Versions{Min: max(v.Min, o.Min), Max: min(v.Max, o.Max)}
	if r.Empty() {
		return None
	}
	return r
}

// OpenEnded reports whether the range is "N+".
func (v Versions) OpenEnded() bool { return !v.Empty() && v.Max == math.MaxInt16 }

// ParseVersions reads Kafka's version syntax: "N", "N+", "N-M" or "none".
func ParseVersions(s string) (Versions, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "" || s == "none":
		return None, nil
	case strings.HasSuffix(s, "+"):
		n, err := strconv.ParseInt(strings.TrimSuffix(s, "+"), 10, 16)
		if err != nil || n < 0 {
			return None, fmt.Errorf("bad versions %q", s)
		}
		return Versions{Min: int16(n), Max: math.MaxInt16}, nil
	case strings.Contains(s, "-"):
		lo, hi, _ := strings.Cut(s, "-")
		a, err1 := strconv.ParseInt(lo, 10, 16)
		b, err2 := strconv.ParseInt(hi, 10, 16)
		if err1 != nil || err2 != nil || a < 0 || b < a {
			return None, fmt.Errorf("bad versions %q", s)
		}
		return Versions{Min: int16(a), Max: int16(b)}, nil
	default:
		n, err := strconv.ParseInt(s, 10, 16)
		if err != nil || n < 0 {
			return None, fmt.Errorf("bad versions %q", s)
		}
		return Versions{Min: int16(n), Max: int16(n)}, nil
	}
}

// Primitives are the scalar types supported, with the fewest bytes each
// takes on the wire in a flexible version (compact strings and arrays take
// one byte at least).
var primitives = map[string]int{
	"bool": 1, "int8": 1, "int16": 2, "int32": 4, "int64": 8, "uuid": 16, "string": 1, "bytes": 1,
}

// IsPrimitive reports whether t is a supported scalar type.
func IsPrimitive(t string) bool { _, ok := primitives[t]; return ok }

// PrimitiveMinSize is the fewest bytes a value of the scalar type t takes
// in a flexible version; 0 for a type that is not a scalar.
func PrimitiveMinSize(t string) int { return primitives[t] }

// IsArray reports whether the field is an array.
func (f *Field) IsArray() bool { return strings.HasPrefix(f.Type, "[]") }

// Elem is the element type of an array field, or the type itself.
func (f *Field) Elem() string { return strings.TrimPrefix(f.Type, "[]") }

// IsStructArray reports whether the field is an array of structs.
func (f *Field) IsStructArray() bool { return f.IsArray() && !IsPrimitive(f.Elem()) }

// Nullable reports whether the field can be null in some version.
func (f *Field) Nullable() bool { return !f.NullableVersions.Empty() }

// Tagged reports whether the field is a tagged field.
func (f *Field) Tagged() bool { return f.Tag >= 0 }

// GoName is the exported Go name of a schema name: the first letter is
// upper-cased (BumpLeaderEpochs' "partitionIndex") and a trailing "Id"
// becomes "ID" as in kmsg ("TopicId" → "TopicID").
func GoName(name string) string {
	if name == "" {
		return name
	}
	name = strings.ToUpper(name[:1]) + name[1:]
	if strings.HasSuffix(name, "Id") {
		name = strings.TrimSuffix(name, "Id") + "ID"
	}
	return name
}

// MinSize is the fewest bytes an element of this struct takes in a
// flexible version, which is never more than in a non-flexible one: a
// lower bound that lets a decoder reject an array length the remaining
// input cannot hold before allocating it. Fields absent from some valid
// version count zero.
func MinSize(fields []*Field, valid Versions) int {
	n := 1 // the tagged-field count
	for _, f := range fields {
		if f.Tagged() || !f.Versions.Covers(valid) {
			continue
		}
		if f.IsArray() {
			n++
		} else {
			n += primitives[f.Type]
		}
	}
	return n
}

// rawMessage and rawField are the JSON forms. Unknown keys are an error so
// a misspelt key ("nullableVersion") cannot silently change an encoding.
type rawMessage struct {
	APIKey           *int16     `json:"apiKey"`
	Type             string     `json:"type"`
	Listeners        []string   `json:"listeners"`
	Name             string     `json:"name"`
	ValidVersions    string     `json:"validVersions"`
	FlexibleVersions string     `json:"flexibleVersions"`
	Fields           []rawField `json:"fields"`
}

type rawField struct {
	Name             string          `json:"name"`
	Type             string          `json:"type"`
	Versions         string          `json:"versions"`
	NullableVersions string          `json:"nullableVersions"`
	TaggedVersions   string          `json:"taggedVersions"`
	Tag              *int            `json:"tag"`
	Default          json.RawMessage `json:"default"`
	About            string          `json:"about"`
	MapKey           bool            `json:"mapKey"`
	EntityType       string          `json:"entityType"`
	Ignorable        bool            `json:"ignorable"`
	Fields           []rawField      `json:"fields"`
}

// Parse reads one schema. Lines whose first non-blank characters are "//"
// are comments, as in Kafka's files; those before the JSON become Comment.
func Parse(data []byte) (*Message, error) {
	var jsonText bytes.Buffer
	var comment []string
	seenJSON := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "//") {
			if !seenJSON {
				comment = append(comment, strings.TrimSpace(strings.TrimPrefix(t, "//")))
			}
			continue
		} else if t != "" {
			seenJSON = true
		}
		jsonText.WriteString(line)
		jsonText.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(&jsonText)
	dec.DisallowUnknownFields()
	var raw rawMessage
	if err := dec.Decode(&raw); err != nil {
		return nil, err
	}
	if raw.APIKey == nil || raw.Name == "" || (raw.Type != "request" && raw.Type != "response") {
		return nil, errors.New("apiKey, name and type (request or response) are required")
	}
	m := &Message{APIKey: *raw.APIKey, Type: raw.Type, Listeners: raw.Listeners, Name: raw.Name, Comment: comment}
	var err error
	if m.ValidVersions, err = ParseVersions(raw.ValidVersions); err != nil {
		return nil, fmt.Errorf("%s: validVersions: %w", m.Name, err)
	}
	if m.ValidVersions.Empty() || m.ValidVersions.OpenEnded() {
		return nil, fmt.Errorf("%s: validVersions must be a closed range, got %q", m.Name, raw.ValidVersions)
	}
	if m.FlexibleVersions, err = ParseVersions(raw.FlexibleVersions); err != nil {
		return nil, fmt.Errorf("%s: flexibleVersions: %w", m.Name, err)
	}
	if m.Fields, err = parseFields(raw.Fields, m); err != nil {
		return nil, fmt.Errorf("%s: %w", m.Name, err)
	}
	return m, nil
}

func parseFields(raws []rawField, m *Message) ([]*Field, error) {
	var out []*Field
	names := map[string]bool{}
	tags := map[int]bool{}
	for _, r := range raws {
		f := &Field{Name: r.Name, Type: r.Type, About: r.About, Tag: -1}
		if r.Name == "" || r.Type == "" {
			return nil, errors.New("a field needs a name and a type")
		}
		if names[GoName(r.Name)] {
			return nil, fmt.Errorf("field %s: duplicate name", r.Name)
		}
		names[GoName(r.Name)] = true
		var err error
		if f.Versions, err = ParseVersions(r.Versions); err != nil || f.Versions.Empty() {
			return nil, fmt.Errorf("field %s: versions %q", r.Name, r.Versions)
		}
		if f.NullableVersions, err = ParseVersions(r.NullableVersions); err != nil {
			return nil, fmt.Errorf("field %s: nullableVersions: %w", r.Name, err)
		}
		if f.TaggedVersions, err = ParseVersions(r.TaggedVersions); err != nil {
			return nil, fmt.Errorf("field %s: taggedVersions: %w", r.Name, err)
		}
		if r.Default != nil {
			var s string
			if json.Unmarshal(r.Default, &s) != nil {
				s = string(r.Default) // a JSON number or bool
			}
			f.Default = s
		}
		if err := check(f, r, m, tags); err != nil {
			return nil, fmt.Errorf("field %s: %w", r.Name, err)
		}
		if f.IsStructArray() {
			if f.Fields, err = parseFields(r.Fields, m); err != nil {
				return nil, fmt.Errorf("field %s: %w", r.Name, err)
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// check rejects what the generator does not implement.
func check(f *Field, r rawField, m *Message, tags map[int]bool) error {
	switch {
	case f.IsStructArray():
		if len(r.Fields) == 0 {
			return fmt.Errorf("type %s: unknown type or struct without fields", f.Type)
		}
	case len(r.Fields) > 0:
		return errors.New("fields on a non-struct type")
	case !IsPrimitive(f.Elem()):
		return fmt.Errorf("unsupported type %s", f.Type)
	}
	if f.Nullable() {
		if f.Type != "string" && !f.IsArray() {
			return fmt.Errorf("type %s cannot be nullable", f.Type)
		}
		// Nullable in some versions only would need a Go type that is
		// a pointer in some versions and not others; none of the mirror
		// schemas does that.
		if !f.NullableVersions.Covers(f.Versions.Intersect(m.ValidVersions)) {
			return errors.New("nullableVersions must cover versions")
		}
	}
	if r.Tag != nil {
		f.Tag = *r.Tag
		if f.Tag < 0 || tags[f.Tag] {
			return fmt.Errorf("bad or duplicate tag %d", f.Tag)
		}
		tags[f.Tag] = true
		if f.TaggedVersions.Empty() || f.TaggedVersions != f.Versions || !m.FlexibleVersions.Covers(f.TaggedVersions.Intersect(m.ValidVersions)) {
			return errors.New("taggedVersions must equal versions and be flexible")
		}
	} else if !f.TaggedVersions.Empty() {
		return errors.New("taggedVersions without a tag")
	}
	if f.Default != "" {
		switch {
		case f.IsArray():
			if f.Default != "null" || !f.Nullable() {
				return fmt.Errorf("array default %q", f.Default)
			}
		case f.Type == "string":
			if f.Default == "null" && !f.Nullable() {
				return errors.New("null default on a non-nullable string")
			}
		case f.Type == "bool":
			if f.Default != "true" && f.Default != "false" {
				return fmt.Errorf("bool default %q", f.Default)
			}
		case f.Type == "uuid" || f.Type == "bytes":
			return fmt.Errorf("%s defaults are not supported", f.Type)
		default:
			bits := map[string]int{"int8": 8, "int16": 16, "int32": 32, "int64": 64}[f.Type]
			if _, err := strconv.ParseInt(f.Default, 10, bits); err != nil {
				return fmt.Errorf("%s default %q", f.Type, f.Default)
			}
		}
	}
	return nil
}

// ParseDir reads every *.json schema of dir, sorted by API key and then
// request before response.
func ParseDir(dir string) ([]*Message, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	var out []*Message
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		m, err := Parse(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Base(p), err)
		}
		if want := m.Name + ".json"; filepath.Base(p) != want {
			return nil, fmt.Errorf("%s: holds %s, want file name %s", filepath.Base(p), m.Name, want)
		}
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b *Message) int {
		if a.APIKey != b.APIKey {
			return int(a.APIKey) - int(b.APIKey)
		}
		return strings.Compare(a.Type, b.Type) // "request" < "response"
	})
	return out, nil
}

// RPC is a request and its response.
type RPC struct {
	Name     string // e.g. "CreateMirror"
	Key      int16
	Request  *Message
	Response *Message
}

// Pair groups messages into RPCs and checks that each request has exactly
// one response with the same key and versions.
func Pair(msgs []*Message) ([]RPC, error) {
	byKey := map[int16]*RPC{}
	var keys []int16
	for _, m := range msgs {
		r := byKey[m.APIKey]
		if r == nil {
			r = &RPC{Key: m.APIKey}
			byKey[m.APIKey] = r
			keys = append(keys, m.APIKey)
		}
		slot, suffix := &r.Request, "Request"
		if m.Type == "response" {
			slot, suffix = &r.Response, "Response"
		}
		if *slot != nil {
			return nil, fmt.Errorf("key %d: two %ss", m.APIKey, m.Type)
		}
		if !strings.HasSuffix(m.Name, suffix) {
			return nil, fmt.Errorf("%s: a %s's name must end in %s", m.Name, m.Type, suffix)
		}
		*slot = m
	}
	slices.Sort(keys)
	var out []RPC
	for _, k := range keys {
		r := byKey[k]
		if r.Request == nil || r.Response == nil {
			return nil, fmt.Errorf("key %d: needs a request and a response", k)
		}
		r.Name = strings.TrimSuffix(r.Request.Name, "Request")
		if r.Response.Name != r.Name+"Response" {
			return nil, fmt.Errorf("key %d: %s does not answer %s", k, r.Response.Name, r.Request.Name)
		}
		if r.Request.ValidVersions != r.Response.ValidVersions || r.Request.FlexibleVersions != r.Response.FlexibleVersions {
			return nil, fmt.Errorf("%s: request and response versions differ", r.Name)
		}
		out = append(out, *r)
	}
	return out, nil
}
