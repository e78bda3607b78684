package topic

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/cmd/strait/ctl/ctltest"
)

func TestMain(m *testing.M) { os.Exit(ctltest.Main(m)) }

// ctx bounds a test's own admin calls.
func ctx(t *testing.T) context.Context { return ctltest.Context(t) }

// client is a franz-go client of the target, to check a command's effect
// without the binary.
func client(t *testing.T, tg ctltest.Target, opts ...kgo.Opt) *kgo.Client {
	return ctltest.KgoClient(t, tg, opts...)
}

// admin is a new kadm client: a new one per check, as kadm answers
// metadata from its client's cache.
func admin(t *testing.T, tg ctltest.Target) *kadm.Client { return kadm.NewClient(client(t, tg)) }

// produce writes n records to each of the topic's partitions 0..parts-1.
func produce(t *testing.T, tg ctltest.Target, topic string, parts int32, n int) {
	t.Helper()
	cl := client(t, tg, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var rs []*kgo.Record
	for p := range parts {
		for range n {
			rs = append(rs, &kgo.Record{Topic: topic, Partition: p, Value: []byte("v")})
		}
	}
	if err := cl.ProduceSync(ctx(t), rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// decode reads a command's --json output.
func decode[T any](t *testing.T, r ctltest.Result) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(r.Stdout), &v); err != nil {
		t.Fatalf("--json output does not decode: %v\n%s", err, r)
	}
	return v
}

// wantFailure checks a failed run: exit 1 and exactly one stderr line per
// want, each containing its text.
func wantFailure(t *testing.T, r ctltest.Result, wants ...string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(r.Stderr, "\n"), "\n")
	if r.Code != 1 || len(lines) != len(wants) {
		t.Fatalf("want exit 1 and %d stderr lines %q\n%s", len(wants), wants, r)
	}
	for i, w := range wants {
		if !strings.Contains(lines[i], w) {
			t.Fatalf("stderr line %d: want %q\n%s", i+1, w, r)
		}
	}
}

// rows are a table's lines split into cells (header first).
func rows(out string) [][]string {
	var rs [][]string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l != "" {
			rs = append(rs, strings.Fields(l))
		}
	}
	return rs
}

// wantRows checks the table: its header, then rows whose first cells are
// the given ones ("*" for any), in order.
func wantRows(t *testing.T, r ctltest.Result, header string, want ...[]string) {
	t.Helper()
	rs := rows(r.Stdout)
	if len(rs) != len(want)+1 || strings.Join(rs[0], " ") != header {
		t.Fatalf("want header %q and %d rows\n%s", header, len(want), r)
	}
	for i, w := range want {
		got := rs[i+1]
		match := len(got) >= len(w)
		for j := 0; match && j < len(w); j++ {
			match = w[j] == "*" || w[j] == got[j]
		}
		if !match {
			t.Fatalf("row %d: got %q, want it to start with %q\n%s", i+1, got, w, r)
		}
	}
}

// configValue is key's value in cs, "" if absent or null.
func configValue(cs []kadm.Config, key string) string {
	for _, c := range cs {
		if c.Key == key {
			return c.MaybeValue()
		}
	}
	return ""
}
