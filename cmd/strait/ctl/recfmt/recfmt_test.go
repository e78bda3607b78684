package recfmt

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestRoundTrip: what a template prints, the same template reads back.
func TestRoundTrip(t *testing.T) {
	recs := []*kgo.Record{
		{Key: []byte("k1"), Value: []byte("a value;with=delims"), Headers: []kgo.RecordHeader{{Key: "h1", Value: []byte("x")}, {Key: "h2", Value: []byte("")}}},
		{Key: []byte(""), Value: []byte{0, 0xff, '\n'}, Timestamp: time.UnixMilli(1234)},
	}
	for _, tmpl := range []string{
		`%K %k %V %v %H %h{%K %k %V %v;}|\n`,
		`%k{hex} %v{base64} %d %h{%k=%v{hex},}\x00`,
		`%K:%k%V:%v\t%H %h{%K:%k%V:%v;}`,
	} {
		tp, err := Parse(tmpl)
		if err != nil {
			t.Fatalf("%s: %v", tmpl, err)
		}
		var out []byte
		for i, r := range recs {
			out = tp.Append(out, r, int64(i))
		}
		rd, err := tp.NewReader(strings.NewReader(string(out)), 1<<20)
		if err != nil {
			t.Fatalf("%s: %v", tmpl, err)
		}
		for i, want := range recs {
			got, err := rd.Read()
			if err != nil {
				t.Fatalf("%s: record %d of %q: %v", tmpl, i, out, err)
			}
			if string(got.Key) != string(want.Key) || string(got.Value) != string(want.Value) || len(got.Headers) != len(want.Headers) {
				t.Fatalf("%s: record %d: got %+v, want %+v", tmpl, i, got, want)
			}
			for j, h := range want.Headers {
				if got.Headers[j].Key != h.Key || string(got.Headers[j].Value) != string(h.Value) {
					t.Fatalf("%s: record %d header %d: got %+v, want %+v", tmpl, i, j, got.Headers[j], h)
				}
			}
			if strings.Contains(tmpl, "%d") && !got.Timestamp.Equal(want.Timestamp) && !(want.Timestamp.IsZero() && got.Timestamp.UnixMilli() == want.Timestamp.UnixMilli()) {
				t.Fatalf("%s: record %d: timestamp %v, want %v", tmpl, i, got.Timestamp, want.Timestamp)
			}
		}
		if _, err := rd.Read(); err != io.EOF {
			t.Fatalf("%s: after the records: %v, want EOF", tmpl, err)
		}
	}
}

// TestBadTemplates: each is rejected with an error naming the problem.
func TestBadTemplates(t *testing.T) {
	for tmpl, want := range map[string]string{
		`%q`:         "unknown verb %q",
		`%v{zip}`:    "unknown modifier %v{zip}",
		`%h`:         "%h wants the header template in braces",
		`%h{%k=%v;`:  "without its closing brace",
		`abc\`:       "trailing backslash",
		`\xZZ`:       "not two hex digits",
		`%v{hex`:     "without its closing brace",
		`trailing %`: "trailing %",
	} {
		if _, err := Parse(tmpl); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", tmpl, err, want)
		}
	}
	for tmpl, want := range map[string]string{
		`%k%v\n`:      "%k must be followed by text",
		`%o %v\n`:     "%o cannot be read",
		`%h{%k=%v}\n`: "header template must end with text",
	} {
		tp, err := Parse(tmpl)
		if err != nil {
			t.Fatalf("%s: %v", tmpl, err)
		}
		if _, err := tp.NewReader(strings.NewReader(""), 10); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", tmpl, err, want)
		}
	}
}

// TestReadLimits: input that does not match, or text with no end within
// the size limit, is an error naming the record, not a crash or a hang.
func TestReadLimits(t *testing.T) {
	tp, _ := Parse(`%k %v\n`)
	rd, _ := tp.NewReader(strings.NewReader("k v\nnodelimiter\n"), 100)
	if _, err := rd.Read(); err != nil {
		t.Fatal(err)
	}
	if _, err := rd.Read(); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "record 2") {
		t.Fatalf("%v", err)
	}
	tp, _ = Parse(`%v\n`)
	rd, _ = tp.NewReader(strings.NewReader(strings.Repeat("x", 500)+"\n"), 100)
	if _, err := rd.Read(); !errors.Is(err, ErrFormat) {
		t.Fatalf("%v", err)
	}
	tp, _ = Parse(`%K:%k\n`)
	rd, _ = tp.NewReader(strings.NewReader("999999999:\n"), 100)
	if _, err := rd.Read(); !errors.Is(err, ErrFormat) {
		t.Fatalf("%v", err)
	}
}
