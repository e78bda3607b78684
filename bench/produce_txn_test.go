package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// readCommitted checks that topic has no transaction open (every
// partition's last stable offset is its end offset) and returns the
// records a read_committed consumer reads from its start, once it read
// at least want.
func readCommitted(t *testing.T, ctx context.Context, b *Broker, topic string, want int) int {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addrs...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	lso, err := kadm.NewClient(cl).ListCommittedOffsets(ctx, topic)
	if err == nil {
		err = lso.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	end, err := offsets(ctx, seedOpts(b.Addrs, nil), topic, false)
	if err != nil {
		t.Fatal(err)
	}
	lso.Each(func(o kadm.ListedOffset) {
		if o.Offset != end[o.Partition] {
			t.Fatalf("%s[%d]: last stable offset %d, end %d: a transaction is open", topic, o.Partition, o.Offset, end[o.Partition])
		}
	})
	n := 0
	for n < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read_committed read %d records of %d", n, want)
		}
		fs.EachError(func(_ string, p int32, err error) { t.Fatalf("fetch %s[%d]: %v", topic, p, err) })
		n += fs.NumRecords()
	}
	return n
}

// TestProduceTransactional: two clients send 1050 records in transactions
// of 100 (claimed from one counter, so ten full and one of 50), and every
// record is committed.
func TestProduceTransactional(t *testing.T) {
	b := startKfake(t)
	ctx := ctxT(t)
	pc := testProducer(b, "produce-txn")
	pc.Producers = 2
	res, err := RunProduce(ctx, ProduceConfig{ProducerConfig: pc, Records: 1050, TxnRecords: 100, Label: b.Label})
	if err != nil {
		t.Fatal(err)
	}
	if res.Workload != WorkloadProduceTxn || res.Records != 1050 || res.Bytes != 1050*1024 || res.Errors != 0 || res.Transactions != 11 {
		t.Fatalf("result %+v, want %s of 1050 records in 11 transactions", res, WorkloadProduceTxn)
	}
	if res.TransactionsPerSec <= 0 || res.TransactionsPerSec != float64(res.Transactions)/res.Elapsed.Seconds() {
		t.Fatalf("%v transactions a second for %d in %v", res.TransactionsPerSec, res.Transactions, res.Elapsed)
	}
	checkLatency(t, "record", res.Latency, 1050)
	checkLatency(t, "transaction", res.TxnLatency, 11)
	if got := readCommitted(t, ctx, b, pc.Topic, 1050); got != 1050 {
		t.Fatalf("read_committed read %d records, want 1050", got)
	}
}

func TestProduceTransactionalConfigErrors(t *testing.T) {
	base := ProducerConfig{Bootstrap: []string{"127.0.0.1:1"}}
	acks1 := base
	acks1.Acks = "1"
	for name, cfg := range map[string]ProduceConfig{
		"acks=1":       {ProducerConfig: acks1, Records: 1, TxnRecords: 10},
		"rate":         {ProducerConfig: base, Records: 1, TxnRecords: 10, Rate: 100},
		"negative txn": {ProducerConfig: base, Records: 1, TxnRecords: -1},
	} {
		if _, err := RunProduce(context.Background(), cfg); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// straitServeCmd is a --target-cmd starting one strait node (this test
// binary standing in for `strait serve`, see TestMain) on free loopback
// ports, in a temporary directory, and the address it serves clients on.
func straitServeCmd(t *testing.T) (addr, cmd string) {
	t.Helper()
	ports, err := freePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	addr = fmt.Sprintf("127.0.0.1:%d", ports[0])
	cmd = fmt.Sprintf("%s serve --set log.dirs=%s --set listeners=PLAINTEXT://%s,CONTROLLER://127.0.0.1:%d --set controller.quorum.voters=1@127.0.0.1:%d --set metrics.listener=",
		os.Args[0], t.TempDir(), addr, ports[1], ports[1])
	return addr, cmd
}

// TestCLIProduceTransactionalOnStrait runs `strait bench produce
// --transactional` as `make bench` does: against a strait broker (this
// test binary standing in for `strait serve`, see TestMain) and kfake,
// side by side.
func TestCLIProduceTransactionalOnStrait(t *testing.T) {
	addr, serve := straitServeCmd(t)
	code, stdout, stderr := runMain(t, "produce", "--target", addr, "--target-cmd", serve,
		"--peer", "kfake", "--peer-exec", os.Args[0]+" kfake-serve", "--transactional", "--txn-records", "50",
		"--records", "400", "--partitions", "2", "--limits=false", "--quiet", "--json")
	if code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, tail(stderr, 4000))
	}
	var rep Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v in %s", err, stdout)
	}
	if len(rep.Results) != 2 || len(rep.Errors) != 0 || len(rep.Ratios) != 1 || rep.Ratios[0].Workload != WorkloadProduceTxn {
		t.Fatalf("results %+v, errors %q, ratios %+v: want strait's and kfake's and their ratio", rep.Results, rep.Errors, rep.Ratios)
	}
	for i, broker := range []string{"strait", "kfake"} {
		r := rep.Results[i]
		if r.Broker != broker || r.Workload != WorkloadProduceTxn || r.Records != 400 || r.Transactions != 8 || r.Errors != 0 {
			t.Errorf("result %d: %+v, want %s's 400 records in 8 transactions", i, r, broker)
		}
	}
	if c := rep.Results[0].Cost; c == nil || c.PID <= 0 {
		t.Errorf("strait's cost %+v: want its process measured", c)
	}
	if rep.Config["transactional"] != "true" || rep.Config["txn-records"] != "50" {
		t.Errorf("config %v: want transactional with 50 records a transaction", rep.Config)
	}
}

// tail is the end of s, at most n bytes.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

func TestCLIProduceTransactionalText(t *testing.T) {
	code, stdout, stderr := runMain(t, "produce", "--peer", "kfake", "--peer-exec", os.Args[0]+" kfake-serve", "--transactional",
		"--records", "200", "--partitions", "2", "--limits=false", "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"transactional=true", "txn-records=100", "produce-txn  kfake", "produce-txn kfake: 2 transactions committed, "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
}

// TestResultsTransactions: a transactional run is a row of the workloads
// table beside kfake's, and a row of the Transactions section with the
// figures of a transaction.
func TestResultsTransactions(t *testing.T) {
	res := loadResults(t, []string{"testdata/report/produce.json", "testdata/report/produce-txn.json"})
	got := markdownOf(res, "")
	rows := workloadRows(got)
	want := "| produce-txn acks=all p=8 | strait | 48.8 | 21.0ms | 8.39 | 45 | 97.7 | 2.00ms | - | - | append | 800.0 | 0.50 | 0.06 |"
	if len(rows) != 2 || rows[1] != want {
		t.Fatalf("workload rows %q, want the produce row and\n%s", rows, want)
	}
	for _, want := range []string{
		"\n## Transactions\n",
		"| produce-txn acks=all p=8 | strait | 100 | 50000 | 500.0 | 1.50ms | 22.0ms | 100000 | 1000.0 | 800µs | 3.00ms | 0.50 |\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("markdown lacks %q:\n%s", want, got)
		}
	}
	// Without a transactional run there is no such section.
	res = loadResults(t, []string{"testdata/report/produce.json"})
	md := markdownOf(res, "")
	if strings.Contains(md, "## Transactions") {
		t.Errorf("a Transactions section without a transactional run:\n%s", md)
	}
}
