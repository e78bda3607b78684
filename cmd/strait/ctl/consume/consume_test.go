package consume_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/cmd/strait/ctl/ctltest"
)

func TestMain(m *testing.M) { os.Exit(ctltest.Main(m)) }

// seed is three records in partition 0 at timestamps 1 s, 2 s and 3 s.
func seed(t *testing.T, tg ctltest.Target, topic string) {
	ctltest.Produce(t, tg,
		&kgo.Record{Topic: topic, Key: []byte("k1"), Value: []byte("v one"), Timestamp: time.UnixMilli(1000),
			Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("x")}, {Key: "g", Value: []byte("y")}}},
		&kgo.Record{Topic: topic, Value: []byte{0xff, 0x00, 'a'}, Timestamp: time.UnixMilli(2000)},
		&kgo.Record{Topic: topic, Key: []byte("k3"), Value: []byte("v three"), Timestamp: time.UnixMilli(3000)},
	)
}

// TestConsume runs `strait consume` against Strait and kfake.
func TestConsume(t *testing.T) {
	for _, tg := range ctltest.Targets(t) {
		t.Run(tg.Name, func(t *testing.T) {
			topic := ctltest.NewTopic(t, tg, 2)
			seed(t, tg, topic)
			check := func(r ctltest.Result, want string) {
				t.Helper()
				if r.Code != 0 || r.Stdout != want {
					t.Fatalf("want stdout %q:\n%s", want, r)
				}
			}
			check(ctltest.Must(t, tg, "", "consume", topic, "-n", "3", "-p", "0", "-f", `%v{hex}\n`), "76206f6e65\nff0061\n76207468726565\n")
			check(ctltest.Must(t, tg, "", "consume", topic, "-n", "1"), "v one\n")
			check(ctltest.Must(t, tg, "", "consume", topic, "-n", "1", "-f", `%t %p %o %k=%v %H [%h{%k:%v,}] %d %d{rfc3339}\n`),
				topic+" 0 0 k1=v one 2 [h:x,g:y,] 1000 1970-01-01T00:00:01Z\n")
			check(ctltest.Must(t, tg, "", "consume", topic, "-n", "2", "-o", "-2", "-p", "0", "-f", `%o\n`), "1\n2\n")
			check(ctltest.Must(t, tg, "", "consume", topic, "-n", "1", "-o", "2", "-f", `%o\n`), "2\n")
			check(ctltest.Must(t, tg, "", "consume", topic, "-n", "1", "-o", "@2500", "-f", `%o\n`), "2\n")
			check(ctltest.Must(t, tg, "", "consume", topic, "-n", "2", "-o", "@1970-01-01T00:00:02Z", "-f", `%o\n`), "1\n2\n")

			t.Run("two topics", func(t *testing.T) {
				other := ctltest.NewTopic(t, tg, 1)
				ctltest.Produce(t, tg, &kgo.Record{Topic: other, Value: []byte("elsewhere")})
				r := ctltest.Must(t, tg, "", "consume", topic, other, "-n", "4", "-f", `%t %v\n`)
				got := strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n")
				slices.Sort(got)
				want := []string{other + " elsewhere", topic + " \xff\x00a", topic + " v one", topic + " v three"}
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Fatalf("got %q, want %q", got, want)
				}
			})
			t.Run("json", func(t *testing.T) {
				r := ctltest.Must(t, tg, "", "consume", topic, "-n", "2", "--json")
				ls := strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n")
				if len(ls) != 2 {
					t.Fatalf("%s", r)
				}
				var got []map[string]any
				for _, l := range ls {
					var m map[string]any
					if err := json.Unmarshal([]byte(l), &m); err != nil {
						t.Fatalf("%v: %s", err, r)
					}
					got = append(got, m)
				}
				want0 := fmt.Sprintf(`map[headers:[map[key:h value:x value_encoding:utf8] map[key:g value:y value_encoding:utf8]] key:k1 key_encoding:utf8 offset:0 partition:0 timestamp:1000 topic:%s value:v one value_encoding:utf8]`, topic)
				want1 := fmt.Sprintf(`map[headers:[] key:<nil> key_encoding:utf8 offset:1 partition:0 timestamp:2000 topic:%s value:/wBh value_encoding:base64]`, topic)
				if fmt.Sprint(got[0]) != want0 || fmt.Sprint(got[1]) != want1 {
					t.Fatalf("got\n%v\n%v\nwant\n%s\n%s", got[0], got[1], want0, want1)
				}
				r = ctltest.Must(t, tg, "", "consume", topic, "-n", "1", "--json", "--base64")
				if !strings.Contains(r.Stdout, `"key":"azE=","key_encoding":"base64","value":"diBvbmU=","value_encoding":"base64"`) {
					t.Fatalf("%s", r)
				}
			})
			t.Run("group", func(t *testing.T) {
				group := "g-" + topic
				check(ctltest.Must(t, tg, "", "consume", topic, "-g", group, "-n", "2", "-f", `%o\n`), "0\n1\n")
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				offs, err := kadm.NewClient(ctltest.KgoClient(t, tg)).FetchOffsets(ctx, group)
				if err != nil {
					t.Fatal(err)
				}
				if o, ok := offs.Lookup(topic, 0); !ok || o.At != 2 {
					t.Fatalf("committed %+v, want offset 2 of %s-0", offs, topic)
				}
				// The group resumes where it stopped; -o only applies without a commit.
				check(ctltest.Must(t, tg, "", "consume", topic, "-g", group, "-n", "1", "-o", "end", "-f", `%o %v\n`), "2 v three\n")
			})
			t.Run("read committed", func(t *testing.T) {
				txTopic := ctltest.NewTopic(t, tg, 1)
				cl := ctltest.KgoClient(t, tg, kgo.TransactionalID("tx-"+txTopic), kgo.DefaultProduceTopic(txTopic))
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				for _, commit := range []kgo.TransactionEndTry{kgo.TryAbort, kgo.TryCommit} {
					if err := cl.BeginTransaction(); err != nil {
						t.Fatal(err)
					}
					if err := cl.ProduceSync(ctx, kgo.StringRecord(fmt.Sprint(commit))).FirstErr(); err != nil {
						t.Fatal(err)
					}
					if err := cl.EndTransaction(ctx, commit); err != nil {
						t.Fatal(err)
					}
				}
				check(ctltest.Must(t, tg, "", "consume", txTopic, "-n", "1", "--read-committed"), "true\n")
				check(ctltest.Must(t, tg, "", "consume", txTopic, "-n", "2"), "false\ntrue\n")
			})
			t.Run("errors", func(t *testing.T) {
				oneLine := func(r ctltest.Result, code int, want string) {
					t.Helper()
					if r.Code != code || !strings.HasPrefix(r.Stderr, "strait consume: ") || !strings.Contains(r.Stderr, want) {
						t.Fatalf("want exit %d and %q:\n%s", code, want, r)
					}
					if code == 1 && strings.Count(r.Stderr, "\n") != 1 {
						t.Fatalf("want one line:\n%s", r)
					}
				}
				oneLine(ctltest.Run(t, tg, "", "consume", "nosuch-"+topic, "-n", "1"), 1, "nosuch-"+topic+": UNKNOWN_TOPIC_OR_PARTITION")
				oneLine(ctltest.Run(t, tg, "", "consume", topic, "-p", "7", "-n", "1"), 1, topic+" partition 7: UNKNOWN_TOPIC_OR_PARTITION")
				oneLine(ctltest.Run(t, tg, "", "consume", topic, "-o", "yesterday"), 2, `--offset "yesterday"`)
				oneLine(ctltest.Run(t, tg, "", "consume", topic, "-g", "g", "-p", "0"), 2, "--partitions cannot be used with --group")
				oneLine(ctltest.Run(t, tg, "", "consume", topic, "--nosuch"), 2, "nosuch")
				oneLine(ctltest.Run(t, tg, "", "consume", topic, "-f", `%q`), 2, "unknown verb %q")
				oneLine(ctltest.Run(t, ctltest.Target{Brokers: "127.0.0.1:1"}, "", "consume", topic, "--timeout", "3s"), 1, "127.0.0.1:1")
			})
		})
	}
}

// TestConsumeFollowsUntilInterrupt: with no -n, consume prints records
// as they arrive, past --timeout, and exits 0 on SIGINT.
func TestConsumeFollowsUntilInterrupt(t *testing.T) {
	for _, tg := range ctltest.Targets(t) {
		t.Run(tg.Name, func(t *testing.T) {
			topic := ctltest.NewTopic(t, tg, 1)
			cmd := ctltest.Command(t, tg, "consume", topic, "--timeout", "2s")
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			lines := make(chan string)
			go func() {
				sc := bufio.NewScanner(out)
				for sc.Scan() {
					lines <- sc.Text()
				}
				close(lines)
			}()
			for i, v := range []string{"first", "second"} {
				if i == 1 {
					time.Sleep(3 * time.Second) // past --timeout: following is not bounded by it
				}
				ctltest.Produce(t, tg, &kgo.Record{Topic: topic, Value: []byte(v)})
				select {
				case l := <-lines:
					if l != v {
						t.Fatalf("printed %q, want %q", l, v)
					}
				case <-time.After(30 * time.Second):
					t.Fatalf("%q not printed within 30 s", v)
				}
			}
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("after SIGINT: %v, want exit 0", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("consume did not exit within 30 s of SIGINT")
			}
		})
	}
}

// TestPipeConsumeToProduce: `strait consume a -n 100 -f '%k %v\n' |
// strait produce b -f '%k %v\n'` copies keys and values exactly.
func TestPipeConsumeToProduce(t *testing.T) {
	for _, tg := range ctltest.Targets(t) {
		t.Run(tg.Name, func(t *testing.T) { testPipe(t, tg) })
	}
}

func testPipe(t *testing.T, tg ctltest.Target) {
	a, b := ctltest.NewTopic(t, tg, 1), ctltest.NewTopic(t, tg, 1)
	var rs []*kgo.Record
	for i := range 120 {
		rs = append(rs, &kgo.Record{Topic: a, Key: fmt.Appendf(nil, "key-%d", i), Value: fmt.Appendf(nil, "value %d: tabs\tand spaces  é", i)})
	}
	ctltest.Produce(t, tg, rs...)
	bin := ctltest.Binary(t)
	script := fmt.Sprintf(`%[1]s consume %[2]s -n 100 -f '%%k %%v\n' --brokers %[4]s | %[1]s produce %[3]s -f '%%k %%v\n' -q --brokers %[4]s`, bin, a, b, tg.Brokers)
	cmd := exec.Command("sh", "-c", script)
	cmd.Env = ctltest.Environ(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	got := ctltest.Consume(t, tg, b, 100)
	if len(got) != 100 {
		t.Fatalf("%d records copied, want 100", len(got))
	}
	for i, r := range got {
		if string(r.Key) != string(rs[i].Key) || string(r.Value) != string(rs[i].Value) {
			t.Fatalf("record %d: %q %q, want %q %q", i, r.Key, r.Value, rs[i].Key, rs[i].Value)
		}
	}
}

// TestHelp: --help shows the synopsis, examples and the --format language.
func TestHelp(t *testing.T) {
	r := ctltest.Run(t, ctltest.Target{}, "", "consume", "--help")
	for _, want := range []string{"usage: strait consume TOPIC... ", "examples:", "--read-committed", "%h{%k=%v;} each header"} {
		if r.Code != 0 || !strings.Contains(r.Stdout, want) {
			t.Fatalf("want %q:\n%s", want, r)
		}
	}
}
