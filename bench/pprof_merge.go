package bench

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
)

// mergeProfiles joins gzipped profile.proto documents (what Go's
// runtime/pprof writes and net/http/pprof serves) into one, each input's
// sample values multiplied by its scale: the CPU profile of a workload
// fetched in windows becomes one profile, and the allocations of a
// workload are its end's allocs profile merged with its start's scaled by
// -1 (what net/http/pprof does for ?seconds=N of a cumulative profile).
//
// github.com/google/pprof/profile, which does this, is not a dependency,
// so the documents are rewritten field by field (profile.proto of
// github.com/google/pprof): each input's strings are appended to the
// first's string table and its mapping, location and function ids moved
// past the ones before it, so every reference stays valid. Equal
// functions and locations of two inputs stay separate entries; pprof's
// reports add them up by name, as they do for inlined copies. The sample
// and period types, the drop/keep frames and the comments are the
// first's (the inputs are the same kind of profile); the time is the
// first's start and the duration runs to the last's end.
func mergeProfiles(profiles [][]byte, scales []int64) ([]byte, error) {
	if len(profiles) == 0 || len(profiles) != len(scales) {
		return nil, errors.New("bench: merge profiles: nothing to merge")
	}
	var (
		out        []byte
		m          profileMerge
		start, end int64
	)
	for i, gz := range profiles {
		raw, err := gunzip(gz)
		if err != nil {
			return nil, fmt.Errorf("bench: merge profiles: input %d: %w", i, err)
		}
		in, err := m.rewrite(raw, i == 0, scales[i])
		if err != nil {
			return nil, fmt.Errorf("bench: merge profiles: input %d: %w", i, err)
		}
		out = append(out, in.body...)
		if i == 0 || in.timeNanos < start {
			start = in.timeNanos
		}
		end = max(end, in.timeNanos+in.durationNanos)
		m.next()
	}
	out = protowire.AppendTag(out, profTimeNanos, protowire.VarintType)
	out = protowire.AppendVarint(out, uint64(start))
	out = protowire.AppendTag(out, profDurationNanos, protowire.VarintType)
	out = protowire.AppendVarint(out, uint64(end-start))
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(out); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func gunzip(b []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// Field numbers of profile.proto.
const (
	profSample        = 2
	profMapping       = 3
	profLocation      = 4
	profFunction      = 5
	profStringTable   = 6
	profTimeNanos     = 9
	profDurationNanos = 10

	sampleLocationID = 1
	sampleValue      = 2
	sampleLabel      = 3

	labelKey     = 1
	labelStr     = 2
	labelNumUnit = 4

	mappingID       = 1
	mappingFilename = 5
	mappingBuildID  = 6

	locationID        = 1
	locationMappingID = 2
	locationLine      = 4
	lineFunctionID    = 1

	functionID         = 1
	functionName       = 2
	functionSystemName = 3
	functionFilename   = 4
)

// profileMerge is where the input being rewritten moves its strings and
// ids: past those of the inputs before it.
type profileMerge struct {
	strings, mappings, locations, functions    uint64 // offsets of this input
	nStrings, maxMapping, maxLocation, maxFunc uint64 // seen so far, this input included
}

// next moves the offsets past the input just rewritten.
func (m *profileMerge) next() {
	m.strings = m.nStrings
	m.mappings, m.locations, m.functions = m.maxMapping, m.maxLocation, m.maxFunc
}

type rewritten struct {
	body                     []byte
	timeNanos, durationNanos int64
}

// fieldRule says how a varint field of a message is rewritten: a string
// index moved by the string offset, an id by its kind's, or kept.
type fieldRule func(m *profileMerge, v uint64) uint64

func (m *profileMerge) str(v uint64) uint64 { return v + m.strings }

// id moves a non-zero id by off and records the largest; 0 means none.
func moveID(v, off uint64, seen *uint64) uint64 {
	if v == 0 {
		return 0
	}
	*seen = max(*seen, v+off)
	return v + off
}

func (m *profileMerge) rewrite(raw []byte, first bool, scale int64) (rewritten, error) {
	var r rewritten
	err := walk(raw, func(num protowire.Number, typ protowire.Type, v uint64, b []byte, whole []byte) error {
		switch num {
		case profStringTable:
			m.nStrings++
			r.body = append(r.body, whole...)
		case profTimeNanos:
			r.timeNanos = int64(v)
		case profDurationNanos:
			r.durationNanos = int64(v)
		case profSample, profMapping, profLocation, profFunction:
			s, err := m.rewriteEntry(num, b, scale)
			if err != nil {
				return err
			}
			r.body = appendBytesField(r.body, num, s)
		default:
			// sample_type, period_type, period, drop/keep frames,
			// comments, default_sample_type, doc_url: the first input's
			// (their string indexes are its own, unmoved).
			if first {
				r.body = append(r.body, whole...)
			}
		}
		return nil
	})
	return r, err
}

// msgRules say how to rewrite a message: the varint fields that are a
// string index or an id, and the fields that are messages of their own.
type msgRules struct {
	varints map[protowire.Number]fieldRule
	nested  map[protowire.Number]*msgRules
}

// The rules of profile.proto's messages but Sample (rewriteSample).
var (
	mappingRules = &msgRules{varints: map[protowire.Number]fieldRule{
		mappingID:       func(m *profileMerge, v uint64) uint64 { return moveID(v, m.mappings, &m.maxMapping) },
		mappingFilename: (*profileMerge).str,
		mappingBuildID:  (*profileMerge).str,
	}}
	functionRules = &msgRules{varints: map[protowire.Number]fieldRule{
		functionID:         func(m *profileMerge, v uint64) uint64 { return moveID(v, m.functions, &m.maxFunc) },
		functionName:       (*profileMerge).str,
		functionSystemName: (*profileMerge).str,
		functionFilename:   (*profileMerge).str,
	}}
	locationRules = &msgRules{
		varints: map[protowire.Number]fieldRule{
			locationID:        func(m *profileMerge, v uint64) uint64 { return moveID(v, m.locations, &m.maxLocation) },
			locationMappingID: func(m *profileMerge, v uint64) uint64 { return moveID(v, m.mappings, &m.maxMapping) },
		},
		nested: map[protowire.Number]*msgRules{locationLine: {varints: map[protowire.Number]fieldRule{
			lineFunctionID: func(m *profileMerge, v uint64) uint64 { return moveID(v, m.functions, &m.maxFunc) },
		}}},
	}
	labelRules = &msgRules{varints: map[protowire.Number]fieldRule{
		labelKey: (*profileMerge).str, labelStr: (*profileMerge).str, labelNumUnit: (*profileMerge).str,
	}}
)

// rewriteEntry rewrites one Sample, Mapping, Location or Function.
func (m *profileMerge) rewriteEntry(num protowire.Number, b []byte, scale int64) ([]byte, error) {
	switch num {
	case profSample:
		return m.rewriteSample(b, scale)
	case profMapping:
		return rewriteMessage(b, mappingRules, m)
	case profLocation:
		return rewriteMessage(b, locationRules, m)
	}
	return rewriteMessage(b, functionRules, m)
}

// rewriteSample moves the location ids and label strings of a Sample and
// scales its values.
func (m *profileMerge) rewriteSample(b []byte, scale int64) ([]byte, error) {
	var out []byte
	err := walk(b, func(num protowire.Number, typ protowire.Type, v uint64, sub []byte, whole []byte) error {
		switch {
		case num == sampleLocationID || num == sampleValue:
			move := func(v uint64) uint64 {
				if num == sampleLocationID {
					return moveID(v, m.locations, &m.maxLocation)
				}
				return uint64(int64(v) * scale)
			}
			if typ == protowire.BytesType { // packed
				var packed []byte
				for len(sub) > 0 {
					x, n := protowire.ConsumeVarint(sub)
					if n < 0 {
						return protowire.ParseError(n)
					}
					packed = protowire.AppendVarint(packed, move(x))
					sub = sub[n:]
				}
				out = appendBytesField(out, num, packed)
				return nil
			}
			out = protowire.AppendTag(out, num, protowire.VarintType)
			out = protowire.AppendVarint(out, move(v))
		case num == sampleLabel:
			s, err := rewriteMessage(sub, labelRules, m)
			if err != nil {
				return err
			}
			out = appendBytesField(out, num, s)
		default:
			out = append(out, whole...)
		}
		return nil
	})
	return out, err
}

// rewriteMessage rewrites the fields of a message that rules name and
// copies the rest.
func rewriteMessage(b []byte, rules *msgRules, m *profileMerge) ([]byte, error) {
	var out []byte
	err := walk(b, func(num protowire.Number, typ protowire.Type, v uint64, sub []byte, whole []byte) error {
		if rule, ok := rules.varints[num]; ok && typ == protowire.VarintType {
			out = protowire.AppendTag(out, num, typ)
			out = protowire.AppendVarint(out, rule(m, v))
			return nil
		}
		if nested, ok := rules.nested[num]; ok && typ == protowire.BytesType {
			s, err := rewriteMessage(sub, nested, m)
			if err != nil {
				return err
			}
			out = appendBytesField(out, num, s)
			return nil
		}
		out = append(out, whole...)
		return nil
	})
	return out, err
}

func appendBytesField(out []byte, num protowire.Number, b []byte) []byte {
	out = protowire.AppendTag(out, num, protowire.BytesType)
	return protowire.AppendBytes(out, b)
}

// walk calls fn for each field of the message b: its number and type, its
// value when a varint, its contents when length-delimited, and the
// field's whole encoding (tag included) to copy it unchanged.
func walk(b []byte, fn func(num protowire.Number, typ protowire.Type, v uint64, sub []byte, whole []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		var (
			v   uint64
			sub []byte
			m   int
		)
		switch typ {
		case protowire.VarintType:
			v, m = protowire.ConsumeVarint(b[n:])
		case protowire.BytesType:
			sub, m = protowire.ConsumeBytes(b[n:])
		default:
			m = protowire.ConsumeFieldValue(num, typ, b[n:])
		}
		if m < 0 {
			return protowire.ParseError(m)
		}
		if err := fn(num, typ, v, sub, b[:n+m]); err != nil {
			return err
		}
		b = b[n+m:]
	}
	return nil
}
