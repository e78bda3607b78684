package produce_test

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/cmd/strait/ctl/ctltest"
)

func TestMain(m *testing.M) { os.Exit(ctltest.Main(m)) }

func lines(s string) []string { return strings.Split(strings.TrimSuffix(s, "\n"), "\n") }

// TestProduce runs `strait produce` against Strait and kfake and reads
// back what it wrote with a plain kgo consumer.
func TestProduce(t *testing.T) {
	for _, tg := range ctltest.Targets(t) {
		t.Run(tg.Name, func(t *testing.T) {
			t.Run("lines", func(t *testing.T) {
				topic := ctltest.NewTopic(t, tg, 1)
				r := ctltest.Must(t, tg, "one\n\nthree", "produce", topic)
				if got := lines(r.Stdout); len(got) != 3 || !strings.HasPrefix(got[2], "Produced to partition 0 at offset 2 with timestamp ") {
					t.Fatalf("%s", r)
				}
				rs := ctltest.Consume(t, tg, topic, 3)
				for i, want := range []string{"one", "", "three"} {
					if string(rs[i].Value) != want || rs[i].Key != nil {
						t.Fatalf("record %d: key %q value %q, want value %q", i, rs[i].Key, rs[i].Value, want)
					}
				}
			})
			t.Run("format", func(t *testing.T) {
				topic := ctltest.NewTopic(t, tg, 3)
				in := "k1 a=1;b=2; first value\nk2  second\n"
				r := ctltest.Must(t, tg, in, "produce", topic, "-f", `%k %h{%k=%v;} %v\n`, "-p", "2", "-z", "zstd", "--acks", "1", "-H", "src=cli", "--json")
				var got []struct {
					Topic     string `json:"topic"`
					Partition int32  `json:"partition"`
					Offset    int64  `json:"offset"`
				}
				for _, l := range lines(r.Stdout) {
					var p struct {
						Topic     string `json:"topic"`
						Partition int32  `json:"partition"`
						Offset    int64  `json:"offset"`
					}
					if err := json.Unmarshal([]byte(l), &p); err != nil {
						t.Fatalf("%v\n%s", err, r)
					}
					got = append(got, p)
				}
				if len(got) != 2 || got[1].Topic != topic || got[1].Partition != 2 || got[1].Offset != 1 {
					t.Fatalf("%+v\n%s", got, r)
				}
				rs := ctltest.Consume(t, tg, topic, 2)
				if rs[0].Partition != 2 || string(rs[0].Key) != "k1" || string(rs[0].Value) != "first value" || len(rs[0].Headers) != 3 ||
					rs[0].Headers[1].Key != "b" || string(rs[0].Headers[1].Value) != "2" || rs[0].Headers[2].Key != "src" {
					t.Fatalf("first record: %+v", rs[0])
				}
				if string(rs[1].Key) != "k2" || string(rs[1].Value) != "second" || len(rs[1].Headers) != 1 {
					t.Fatalf("second record: %+v", rs[1])
				}
			})
			t.Run("key flag, quiet", func(t *testing.T) {
				topic := ctltest.NewTopic(t, tg, 1)
				r := ctltest.Must(t, tg, "v1\nv2\n", "produce", topic, "-k", "fixed", "-q", "--acks", "1", "-z", "gzip")
				if r.Stdout != "" {
					t.Fatalf("-q printed: %s", r)
				}
				rs := ctltest.Consume(t, tg, topic, 2)
				if string(rs[1].Key) != "fixed" || string(rs[1].Value) != "v2" {
					t.Fatalf("%+v", rs[1])
				}
			})
			t.Run("acks 0", func(t *testing.T) {
				topic := ctltest.NewTopic(t, tg, 1)
				r := ctltest.Must(t, tg, "v1\nv2\n", "produce", topic, "--acks", "0", "--json")
				if got := lines(r.Stdout); len(got) != 2 || !strings.Contains(got[1], `"offset":-1`) {
					t.Fatalf("%s", r)
				}
				if rs := ctltest.Consume(t, tg, topic, 2); string(rs[1].Value) != "v2" {
					t.Fatalf("%+v", rs[1])
				}
			})
			t.Run("transaction", func(t *testing.T) {
				topic := ctltest.NewTopic(t, tg, 2)
				ctltest.Must(t, tg, "a\nb\nc\n", "produce", topic, "--transactional-id", "tx-"+topic, "-q", "-z", "lz4")
				rs := ctltest.Consume(t, tg, topic, 3, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
				for _, r := range rs {
					if r.ProducerID < 0 || !r.Attrs.IsTransactional() {
						t.Fatalf("record not transactional: %+v", r)
					}
				}
			})
			t.Run("errors", func(t *testing.T) {
				topic := ctltest.NewTopic(t, tg, 1)
				oneLine := func(r ctltest.Result, code int, want string) {
					t.Helper()
					if r.Code != code || !strings.Contains(r.Stderr, want) || !strings.HasPrefix(r.Stderr, "strait produce: ") {
						t.Fatalf("want exit %d and %q:\n%s", code, want, r)
					}
					if code == 1 && len(lines(r.Stderr)) != 1 {
						t.Fatalf("want one line:\n%s", r)
					}
				}
				oneLine(ctltest.Run(t, tg, "x\n", "produce", "nosuch-"+topic), 1, "nosuch-"+topic+": UNKNOWN_TOPIC_OR_PARTITION")
				oneLine(ctltest.Run(t, tg, "x\n", "produce", topic, "--acks", "2"), 2, "--acks 2")
				oneLine(ctltest.Run(t, tg, "x\n", "produce", topic, "--nosuch"), 2, "nosuch")
				oneLine(ctltest.Run(t, tg, "x\n", "produce", topic, "-z", "brotli"), 2, `--compression "brotli"`)
				oneLine(ctltest.Run(t, tg, "x\n", "produce", topic, "-f", `%o\n`), 2, "%o cannot be read")
				oneLine(ctltest.Run(t, tg, "k1 v1\nnospace\n", "produce", topic, "-f", `%k %v\n`), 1, "record 2: input does not match --format")
				oneLine(ctltest.Run(t, tg, strings.Repeat("x", 2000)+"\n", "produce", topic, "--max-message-bytes", "1000"), 1, "1000")
				oneLine(ctltest.Run(t, ctltest.Target{Brokers: "127.0.0.1:1"}, "x\n", "produce", topic, "--timeout", "3s"), 1, "127.0.0.1:1")
			})
		})
	}
}

// TestHelp: --help shows the synopsis, examples and the --format language.
func TestHelp(t *testing.T) {
	r := ctltest.Run(t, ctltest.Target{}, "", "produce", "--help")
	for _, want := range []string{"usage: strait produce TOPIC ", "examples:", "--transactional-id", "%h{%k=%v;} headers"} {
		if r.Code != 0 || !strings.Contains(r.Stdout, want) {
			t.Fatalf("want %q:\n%s", want, r)
		}
	}
}

// startProduce starts `strait produce args...` with a stdin the test
// writes to, and returns it with a function that waits for the exit.
func startProduce(t *testing.T, tg ctltest.Target, args ...string) (stdin io.WriteCloser, cmd *exec.Cmd, stdout *lockedBuffer) {
	t.Helper()
	cmd = ctltest.Command(t, tg, append([]string{"produce"}, args...)...)
	stdout = &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = stdout, stdout
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return stdin, cmd, stdout
}

// lockedBuffer is the output of a running command, read while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func waitExit(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(30 * time.Second):
		t.Fatal("strait produce did not exit within 30 s")
	}
	return -1
}

// TestProduceStreams: input that arrives slowly is produced past
// --timeout (which bounds each record's delivery, not the input); an
// interrupt ends a plain produce with what was read delivered, and aborts
// a transactional one (its input did not end).
func TestProduceStreams(t *testing.T) {
	for _, tg := range ctltest.Targets(t) {
		t.Run(tg.Name, func(t *testing.T) {
			topic := ctltest.NewTopic(t, tg, 1)
			stdin, cmd, out := startProduce(t, tg, topic, "--timeout", "2s", "-q")
			io.WriteString(stdin, "early\n")
			time.Sleep(3 * time.Second)
			io.WriteString(stdin, "late\n")
			stdin.Close()
			if code := waitExit(t, cmd); code != 0 {
				t.Fatalf("exit %d: %s", code, out)
			}
			if rs := ctltest.Consume(t, tg, topic, 2); string(rs[1].Value) != "late" {
				t.Fatalf("%+v", rs[1])
			}

			txTopic := ctltest.NewTopic(t, tg, 1)
			stdin, cmd, out = startProduce(t, tg, txTopic, "--transactional-id", "tx-"+txTopic)
			io.WriteString(stdin, "never committed\n")
			deadline := time.Now().Add(30 * time.Second)
			for !strings.Contains(out.String(), "Produced") && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
			cmd.Process.Signal(syscall.SIGINT)
			if code := waitExit(t, cmd); code != 1 || !strings.Contains(out.String(), "interrupted: transaction tx-"+txTopic+" aborted") {
				t.Fatalf("exit %d: %s", code, out)
			}
			// The abort marker follows the record: a read-committed
			// consumer gets past it to a committed record and nothing else.
			ctltest.Must(t, tg, "after\n", "produce", txTopic, "--transactional-id", "tx-"+txTopic, "-q")
			rs := ctltest.Consume(t, tg, txTopic, 1, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
			if len(rs) != 1 || string(rs[0].Value) != "after" {
				t.Fatalf("read committed: %d records, first %q", len(rs), rs[0].Value)
			}
		})
	}
}
