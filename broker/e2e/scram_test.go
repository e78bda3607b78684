package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestAddScramBootstrap starts a new cluster with `strait serve
// --add-scram` (kafka-storage format's syntax) and finds the credentials
// with DescribeUserScramCredentials; they survive a restart without the
// flag, and a restart with it is refused: the cluster exists.
func TestAddScramBootstrap(t *testing.T) {
	n := newNode(t)
	n.flags = []string{
		"--add-scram", "SCRAM-SHA-512=[name=admin,password=admin-secret]",
		"--add-scram", `SCRAM-SHA-256=[name=alice,iterations=8192,salt="c2FsdHNhbHQ=",password="alice-secret"]`,
	}
	describe := func() string {
		t.Helper()
		cl, err := kgo.NewClient(kgo.SeedBrokers(n.kafkaAddr()))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		ds, err := kadm.NewClient(cl).DescribeUserSCRAMs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, d := range ds.Sorted() {
			for _, c := range d.CredInfos {
				out = append(out, fmt.Sprintf("%s:%s/%d", d.User, c.Mechanism, c.Iterations))
			}
		}
		return strings.Join(out, " ")
	}
	const want = "admin:SCRAM-SHA-512/4096 alice:SCRAM-SHA-256/8192"

	n.start()
	if got := describe(); got != want {
		t.Fatalf("first start: %s, want %s", got, want)
	}
	if code, _ := n.term(); code != 0 {
		t.Fatalf("exit code %d", code)
	}

	// Kafka refuses to format a formatted directory: so does --add-scram.
	p := startProc(t, t.TempDir(), n.args()...)
	code, err := p.wait(30 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if code == 0 || !strings.Contains(p.stderr(), "--add-scram only applies to the first start of a new cluster") {
		t.Fatalf("--add-scram on an existing cluster: exit %d\n%s", code, p.stderr())
	}

	n.flags = nil
	n.start()
	if got := describe(); got != want {
		t.Fatalf("after a restart: %s, want %s", got, want)
	}
}
