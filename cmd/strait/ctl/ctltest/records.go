package ctltest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

var topicSeq atomic.Int64

// NewTopic creates a topic of a fresh name with the given partitions
// (replication factor 1) and returns its name.
func NewTopic(t testing.TB, tg Target, partitions int32) string {
	t.Helper()
	name := fmt.Sprintf("t%d-%s", topicSeq.Add(1), strings.Map(topicChar, t.Name()))
	resp, err := kadm.NewClient(KgoClient(t, tg)).CreateTopic(Context(t), partitions, 1, nil, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("creating %s: %v", name, err)
	}
	return name
}

// Produce produces records synchronously to the target.
func Produce(t testing.TB, tg Target, rs ...*kgo.Record) {
	t.Helper()
	cl := KgoClient(t, tg, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := cl.ProduceSync(Context(t), rs...).FirstErr(); err != nil {
		t.Fatalf("producing: %v", err)
	}
}

// Consume reads n records of topic from the start (opts added, such as
// read-committed), failing the test if they do not come within 30 s.
func Consume(t testing.TB, tg Target, topic string, n int, opts ...kgo.Opt) []*kgo.Record {
	t.Helper()
	ctx := Context(t)
	cl := KgoClient(t, tg, append([]kgo.Opt{kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, opts...)...)
	var rs []*kgo.Record
	for len(rs) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consuming %s: %d of %d records within 30 s", topic, len(rs), n)
		}
		for _, e := range fs.Errors() {
			t.Fatalf("consuming %s: %v", topic, e.Err)
		}
		rs = append(rs, fs.Records()...)
	}
	return rs
}

// topicChar keeps a test name's characters that a topic name may have.
func topicChar(r rune) rune {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
		return r
	}
	return '-'
}

// Command is `strait args... --brokers <target>` not yet started, with
// Run's environment (no profile file), for a test that talks to it while
// it runs (stdin written slowly, a signal); killed when the test ends if
// still running.
func Command(t testing.TB, tg Target, args ...string) *exec.Cmd {
	t.Helper()
	if tg.Brokers != "" {
		args = append(append([]string{}, args...), "--brokers", tg.Brokers)
	}
	cmd := exec.Command(Binary(t), args...)
	cmd.Env = Environ(t)
	t.Cleanup(func() {
		if cmd.Process != nil && cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd
}

// Environ is Run's environment: PATH, and HOME and XDG_CONFIG_HOME in an
// empty directory.
func Environ(t testing.TB) []string {
	home := t.TempDir()
	return []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "PATH=" + os.Getenv("PATH")}
}
