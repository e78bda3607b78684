package topic

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strait-io/strait/cmd/strait/ctl/ctltest"
)

// TestTrimPrefix: --offset N moves the log start of the partitions asked
// for (DeleteRecords), "end" and a time after every record trim all; an
// offset past the high watermark and a partition the topic lacks are
// failure lines, a missing topic one line.
func TestTrimPrefix(t *testing.T) {
	for _, tg := range ctltest.Targets(t) {
		t.Run(tg.Name, func(t *testing.T) {
			ctltest.Must(t, tg, "", "topic", "create", "orders", "timed", "-p", "2")
			produce(t, tg, "orders", 2, 5)
			produce(t, tg, "timed", 2, 3)
			starts := func(topic string) [2]int64 {
				lo, err := admin(t, tg).ListStartOffsets(ctx(t), topic)
				if err != nil {
					t.Fatal(err)
				}
				var s [2]int64
				for p := range s {
					o, _ := lo.Lookup(topic, int32(p))
					s[p] = o.Offset
				}
				return s
			}

			r := ctltest.Must(t, tg, "", "topic", "trim-prefix", "orders", "--offset", "2", "-p", "0")
			wantRows(t, r, "TOPIC PARTITION NEW-START-OFFSET", []string{"orders", "0", "2"})
			if s := starts("orders"); s != [2]int64{2, 0} {
				t.Fatalf("log starts %v after trimming partition 0 to 2", s)
			}

			r = ctltest.Must(t, tg, "", "topic", "trim-prefix", "orders", "-o", "end", "--json")
			got := decode[[]trimmed](t, r)
			if len(got) != 2 || got[0] != (trimmed{Topic: "orders", Partition: 0, NewStartOffset: 5}) || got[1].NewStartOffset != 5 {
				t.Fatalf("-o end --json: %+v", got)
			}
			if s := starts("orders"); s != [2]int64{5, 5} {
				t.Fatalf("log starts %v after -o end", s)
			}

			later := fmt.Sprintf("@%d", time.Now().Add(time.Hour).UnixMilli())
			r = ctltest.Must(t, tg, "", "topic", "trim-prefix", "timed", "-o", later)
			wantRows(t, r, "TOPIC PARTITION NEW-START-OFFSET", []string{"timed", "0", "3"}, []string{"timed", "1", "3"})

			r = ctltest.Run(t, tg, "", "topic", "trim-prefix", "orders", "-o", "99", "-p", "1,7")
			wantFailure(t, r, "strait topic trim-prefix: orders partition 1: OFFSET_OUT_OF_RANGE",
				"strait topic trim-prefix: orders partition 7: UNKNOWN_TOPIC_OR_PARTITION")
			if r.Stdout != "" {
				t.Fatalf("rows though every partition failed\n%s", r)
			}

			wantFailure(t, ctltest.Run(t, tg, "", "topic", "trim-prefix", "nosuch", "-o", "1"),
				"strait topic trim-prefix: nosuch: UNKNOWN_TOPIC_OR_PARTITION")
			for _, bad := range [][]string{{"orders"}, {"orders", "-o", "soon"}, {"orders", "-o", "@yesterday"}, {"orders", "-o", "1", "-p", "x"}} {
				r := ctltest.Run(t, tg, "", append([]string{"topic", "trim-prefix"}, bad...)...)
				if r.Code != 2 || !strings.HasPrefix(r.Stderr, "strait topic trim-prefix: ") {
					t.Fatalf("%v: want a usage error\n%s", bad, r)
				}
			}
		})
	}
}
