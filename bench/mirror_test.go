package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCLIMirror runs `strait bench mirror` end to end at a tiny size: two
// single nodes of this test binary standing in for `strait serve`
// (TestMain), 4 MiB per throughput phase and a 3 s steady state, and
// checks every figure the report carries. The destination's produce and
// the source's fetch are checked first: they need no mirroring.
func TestCLIMirror(t *testing.T) {
	data := t.TempDir()
	const (
		records = 4096 // 4 MiB of 1 KiB records
		steady  = 3 * time.Second
		every   = 200 * time.Millisecond
	)
	start := time.Now()
	code, stdout, stderr := runMain(t, "mirror", "--serve-cmd", os.Args[0]+" serve",
		"--bytes", "4MiB", "--steady-duration", steady.String(), "--sample-every", every.String(),
		"--stall-timeout", "15s", "--data-dir", data, "--keep-data", "--limits=false", "--quiet", "--json")
	elapsed := time.Since(start)
	var rep MirrorReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("exit %d: %v in %s\nstderr %s", code, err, stdout, stderr)
	}
	if rep.Mirror == nil || len(rep.Results) < 3 {
		t.Fatalf("exit %d: %d results, summary %+v, errors %q: want at least the 3 throughput phases\nnode logs:\n%s",
			code, len(rep.Results), rep.Mirror, rep.Errors, mirrorNodeLogs(data))
	}
	sum := rep.Mirror

	// Phases 1 and 2: the same 4096 records into each node, read back from
	// the source.
	dest, srcProd, fetch := rep.Results[0], rep.Results[1], rep.Results[2]
	for i, want := range [][2]string{{phaseDestProduce, labelDest}, {phaseSourceProduce, labelSource}, {phaseSourceFetch, labelSource}} {
		r := rep.Results[i]
		if r.Workload != want[0] || r.Broker != want[1] || r.Errors != 0 || r.Records != records || r.Bytes != records*1024 || r.MiBPerSec <= 0 {
			t.Errorf("result %d: %s on %s: %d records, %d bytes, %.1f MiB/s, %d errors; want %s on %s, %d records, %d bytes, none failed",
				i, r.Workload, r.Broker, r.Records, r.Bytes, r.MiBPerSec, r.Errors, want[0], want[1], records, records*1024)
		}
	}
	checkLatency(t, phaseDestProduce, dest.Latency, records)
	checkLatency(t, phaseSourceProduce, srcProd.Latency, records)
	if dest.Cost == nil || srcProd.Cost == nil || fetch.Cost == nil || dest.Cost.PID == srcProd.Cost.PID || fetch.Cost.PID != srcProd.Cost.PID {
		t.Errorf("costs %+v %+v %+v: want the destination's, then the source's twice", dest.Cost, srcProd.Cost, fetch.Cost)
	}
	if sum.DestProduceMiBPerSec != dest.MiBPerSec || sum.SourceFetchMiBPerSec != fetch.MiBPerSec ||
		sum.Topic != "strait-bench" || sum.Partitions != 8 || sum.MirrorName != "strait-bench" {
		t.Errorf("summary %+v does not match the throughput results", sum)
	}
	for _, p := range []string{"destination/node1/strait-bench-dest-0", "destination/node1/strait-bench-dest-7", "source/node1/strait-bench-7"} {
		if _, err := os.Stat(filepath.Join(data, p)); err != nil {
			t.Errorf("no %s: %v", p, err)
		}
	}
	for _, c := range []*BrokerCost{dest.Cost, srcProd.Cost} {
		if c != nil {
			if err := syscall.Kill(c.PID, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("node %d still exists after the run: %v", c.PID, err)
			}
		}
	}
	if elapsed > 60*time.Second {
		t.Errorf("the run took %v, want under 60s", elapsed)
	}

	// Phases 3 and 4 need a destination that mirrors.
	if !sum.Advertised {
		if code != 1 || len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0], "ApiVersions lacks key 94") || len(rep.Results) != 3 {
			t.Errorf("not advertised: exit %d, errors %q, %d results; want exit 1 with the ApiVersions message and 3 results", code, rep.Errors, len(rep.Results))
		}
		t.Fatalf("the destination does not advertise the mirror RPCs: the mirror phases cannot run: %q", rep.Errors)
	}
	if code != 0 || len(rep.Errors) != 0 || len(rep.Results) != 5 {
		t.Fatalf("exit %d, errors %q, %d results: want 5 results\nnode logs:\n%s", code, rep.Errors, len(rep.Results), mirrorNodeLogs(data))
	}
	catch, st := rep.Results[3], rep.Results[4]
	if catch.Workload != phaseMirrorCatchUp || catch.Broker != labelMirror || catch.Records != records || catch.Bytes != records*1024 ||
		catch.Errors != 0 || catch.MiBPerSec <= 0 || catch.Cost == nil || catch.Cost.PID != dest.Cost.PID {
		t.Errorf("catch-up %+v: want %d records mirrored, metered on the destination", catch, records)
	}
	if sum.MirrorMiBPerSec != catch.MiBPerSec || sum.MirrorStartup <= 0 || sum.MirrorStartup > catch.Elapsed ||
		sum.Ratio != catch.MiBPerSec/min(dest.MiBPerSec, fetch.MiBPerSec) || sum.RatioMet != (sum.Ratio >= 0.8) ||
		sum.DestCPUSecPerGiB != catch.Cost.CPUSecPerGiB {
		t.Errorf("summary %+v does not match the catch-up %+v", sum, catch)
	}

	// The steady state sends exactly what its schedule holds, all of it
	// mirrored, and samples the lag every 200 ms while it produces.
	if want := 0.5 * min(dest.RecordsPerSec, fetch.RecordsPerSec); sum.SteadyRate != want || sum.SteadyFraction != 0.5 {
		t.Fatalf("steady rate %v at fraction %v, want %v", sum.SteadyRate, sum.SteadyFraction, want)
	}
	interval := time.Duration(float64(time.Second) / sum.SteadyRate)
	due := int64((steady + interval - 1) / interval)
	if st.Workload != phaseMirrorSteady || st.Produced != due || st.Records != due || st.Errors != 0 {
		t.Errorf("steady %+v: want the %d records due in %v at %.0f/s produced and mirrored", st, due, steady, sum.SteadyRate)
	}
	// At most one sample per period while the producer sends (which a
	// loaded machine can make take longer than its schedule, and whose
	// listings it slows, dropping ticks).
	if n := int(steady / every); sum.Samples < 2 || sum.Samples > int(sum.SteadyProduceElapsed/every)+1 || !spaced(sum.LagSeries, every) || sum.LagSampleErrors != 0 || st.Latency == nil || st.Latency.Count != uint64(sum.Samples) {
		t.Errorf("%d lag samples (%d failed), latency %+v: want 2 to about %d, in order", sum.Samples, sum.LagSampleErrors, st.Latency, n)
	}
	if len(sum.LagSeries) != sum.Samples || sum.Samples == 0 || sum.LagSeries[0].At <= 0 || sum.LagSeries[sum.Samples-1].At > sum.SteadyProduceElapsed+every {
		t.Errorf("lag series of %d points for %d samples: %v", len(sum.LagSeries), sum.Samples, sum.LagSeries)
	}
	if sum.LagP50 > sum.LagP99 || sum.LagP99 > sum.LagMax || sum.LagRecordsP50 > sum.LagRecordsP99 || sum.LagRecordsP99 > sum.LagRecordsMax ||
		sum.LagP99 != st.Latency.P99 || sum.LagMax != st.Latency.Max || sum.LagMet != (sum.LagP99 < time.Second) ||
		sum.StampLagMax < sum.LagMax || sum.StampLagP50 > sum.StampLagP99 || sum.SteadyProduceP99 <= 0 || sum.SteadyProduceElapsed < steady-interval-paceSlack {
		t.Errorf("lag figures out of order or unlike the steady result: %+v", sum)
	}
	for _, p := range []string{"destination/node1/strait-bench-0", "destination/node1/strait-bench-7"} {
		if _, err := os.Stat(filepath.Join(data, p)); err != nil {
			t.Errorf("the mirror did not create %s: %v", p, err)
		}
	}
	t.Logf("dest produce %.1f MiB/s, source fetch %.1f MiB/s, mirror %.1f MiB/s (ratio %.2f), steady lag p50 %v p99 %v max %v, run %v",
		sum.DestProduceMiBPerSec, sum.SourceFetchMiBPerSec, sum.MirrorMiBPerSec, sum.Ratio, sum.LagP50, sum.LagP99, sum.LagMax, elapsed)
}

// mirrorNodeLogs is the tail of both nodes' logs, for a failure message.
func mirrorNodeLogs(data string) string {
	var b strings.Builder
	for _, side := range []string{"source", "destination"} {
		l := filepath.Join(data, side, "node1.log")
		fmt.Fprintf(&b, "== %s\n%s\n", l, logTail(l, 30))
	}
	return b.String()
}

func TestCLIMirrorFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"mirror", "--acks", "all"}, "unknown flag --acks"},
		{[]string{"mirror", "--target", "x:1"}, "unknown flag --target"},
		{[]string{"mirror", "--steady-fraction", "2"}, "steady fraction 2 outside"},
		{[]string{"mirror", "--steady-duration", "0s"}, "steady duration > 0"},
		{[]string{"mirror", "--batch-bytes", "100"}, "batch bytes 100 < 512"},
		{[]string{"mirror", "--dest-topic", "strait-bench"}, `produce topic "strait-bench" is the mirrored topic`},
		{[]string{"mirror", "--set", "novalue"}, `"novalue" is not key=value`},
	} {
		code, _, stderr := runMain(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d stderr %q, want exit 2 naming %q", tc.args, code, stderr, tc.want)
		}
	}
	code, stdout, _ := runMain(t, "mirror", "-h")
	if code != 0 || !strings.Contains(stdout, "-steady-duration") || !strings.Contains(stdout, "-serve-cmd") {
		t.Errorf("mirror -h: exit %d, stdout %q", code, stdout)
	}
	if !strings.Contains(runHelp(t), "mirror ") {
		t.Error("help lists no mirror workload")
	}
}

// TestMirrorSample: the lag of one sample, from the records sent and
// acknowledged and both sides' end offsets.
func TestMirrorSample(t *testing.T) {
	p := newSteadyProducer(&MirrorConfig{ProducerConfig: ProducerConfig{RecordSize: 8}}, nil, map[int32]int64{0: 100, 1: 50})
	t0 := time.Unix(1000, 0)
	ms := func(n int) int64 { return t0.Add(time.Duration(n) * time.Millisecond).UnixNano() }
	// Partition 0: offsets 100-102 sent at 0, 10, 20 ms, acknowledged at
	// 30 and 40 ms, 102 not yet; partition 1: offset 50 sent at 5 ms,
	// acknowledged at 15 ms.
	p.sent[0], p.ackAt[0] = []int64{ms(0), ms(10), ms(20)}, []int64{ms(30), ms(40), 0}
	p.sent[1], p.ackAt[1] = []int64{ms(5)}, []int64{ms(15)}
	now := t0.Add(time.Second)
	for _, tc := range []struct {
		src, dst map[int32]int64
		want     lagSample
	}{
		{map[int32]int64{0: 103, 1: 51}, map[int32]int64{0: 103, 1: 51}, lagSample{}},
		// Partition 0 lacks offsets 101 and 102: the oldest missing
		// was sent at 10 ms and acknowledged at 40 ms.
		{map[int32]int64{0: 103, 1: 51}, map[int32]int64{0: 101, 1: 51}, lagSample{records: 2, age: 960 * time.Millisecond, sinceSent: 990 * time.Millisecond}},
		{map[int32]int64{0: 103, 1: 51}, map[int32]int64{0: 100, 1: 50}, lagSample{records: 4, age: 985 * time.Millisecond, sinceSent: time.Second}},
		// Offset 102 is on the source but its acknowledgement has not
		// reached the producer: no age since acknowledged.
		{map[int32]int64{0: 103, 1: 51}, map[int32]int64{0: 102, 1: 51}, lagSample{records: 1, sinceSent: 980 * time.Millisecond}},
		// A destination ahead of the listing of the source is no lag.
		{map[int32]int64{0: 101, 1: 50}, map[int32]int64{0: 102, 1: 50}, lagSample{}},
		// Offset 103 was never sent by the producer: unresolved.
		{map[int32]int64{0: 104, 1: 51}, map[int32]int64{0: 103, 1: 51}, lagSample{records: 1, unresolved: 1}},
	} {
		if got := p.sample(now, tc.src, tc.dst); got != tc.want {
			t.Errorf("src %v dst %v: %+v, want %+v", tc.src, tc.dst, got, tc.want)
		}
	}

	var l lagSamples
	for i := range 100 {
		l.add(time.Duration(i)*time.Second, lagSample{records: int64(i + 1), age: time.Duration(i+1) * time.Millisecond, sinceSent: time.Duration(i+1) * time.Second})
	}
	var s MirrorSummary
	l.fill(&s)
	if s.Samples != 100 || s.LagP50 != 50*time.Millisecond || s.LagP99 != 99*time.Millisecond || s.LagMax != 100*time.Millisecond ||
		s.LagRecordsP50 != 50 || s.LagRecordsP99 != 99 || s.LagRecordsMax != 100 ||
		s.StampLagP50 != 50*time.Second || s.StampLagP99 != 99*time.Second || s.StampLagMax != 100*time.Second {
		t.Errorf("summary %+v: want nearest-rank percentiles of 1..100", s)
	}
	if len(s.LagSeries) != 100 || s.LagSeries[99] != (LagPoint{At: 99 * time.Second, Records: 100, Age: 100 * time.Millisecond, SinceTimestamp: 100 * time.Second}) {
		t.Errorf("series %v: want the 100 samples in order", s.LagSeries)
	}
	var b strings.Builder
	writeLagSeries(&b, s.LagSeries[:12])
	if want := "  lag over time, max per 5s (age/records): 0s-5s 5.00ms/5, 5s-10s 10.0ms/10, 10s-15s 12.0ms/12\n"; b.String() != want {
		t.Errorf("lag over time %q, want %q", b.String(), want)
	}
}
