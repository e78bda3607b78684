package bench

import (
	"reflect"
	"strings"
	"testing"
)

func roundRow(broker, workload string, mibs, cpu float64) Result {
	r := Result{Broker: broker, Workload: workload, MiBPerSec: mibs, Records: int64(mibs)}
	if cpu > 0 {
		r.Cost = &BrokerCost{CPUSecPerGiB: cpu}
	}
	return r
}

// medianRounds keeps the first round's row order, takes each row's round of
// median MiB/s (the lower middle of an even count) with the median CPU per
// GiB of its rounds, lists every round, merges the n-th row of one name
// with the n-th of the next round, and passes a single round through as it
// is.
func TestMedianRounds(t *testing.T) {
	rounds := [][]Result{
		{roundRow("strait", "prefill", 100, 2.0), roundRow("strait", "tail", 10, 0), roundRow("kfake", "prefill", 50, 4.0)},
		{roundRow("strait", "prefill", 300, 1.0), roundRow("strait", "tail", 30, 0), roundRow("kfake", "prefill", 70, 3.0)},
		{roundRow("strait", "prefill", 200, 3.0), roundRow("strait", "tail", 20, 0)}, // kfake failed this round
	}
	got := medianRounds(rounds)
	if len(got) != 3 {
		t.Fatalf("%d rows, want 3: %+v", len(got), got)
	}
	prefill, tail, kfake := got[0], got[1], got[2]
	if prefill.Broker != "strait" || prefill.Workload != "prefill" || tail.Workload != "tail" || kfake.Broker != "kfake" {
		t.Fatalf("rows out of order: %+v", got)
	}
	if prefill.MiBPerSec != 200 || prefill.Records != 200 || prefill.Cost.CPUSecPerGiB != 2.0 {
		t.Errorf("prefill: %.0f MiB/s %d records cpu %.1f, want the 200 MiB/s round with the median cpu 2.0",
			prefill.MiBPerSec, prefill.Records, prefill.Cost.CPUSecPerGiB)
	}
	if rounds[2][0].Cost.CPUSecPerGiB != 3.0 {
		t.Error("the median round's cost was changed in place")
	}
	want := []RoundFigure{{100, 2.0}, {300, 1.0}, {200, 3.0}}
	if !reflect.DeepEqual(prefill.Rounds, want) {
		t.Errorf("prefill rounds %+v, want %+v", prefill.Rounds, want)
	}
	if tail.MiBPerSec != 20 || tail.Cost != nil || len(tail.Rounds) != 3 {
		t.Errorf("tail: %+v, want the 20 MiB/s round, no cost, 3 rounds", tail)
	}
	if kfake.MiBPerSec != 50 || kfake.Cost.CPUSecPerGiB != 3.0 || len(kfake.Rounds) != 2 {
		t.Errorf("kfake: %.0f MiB/s cpu %.1f %d rounds, want the lower middle 50 MiB/s with cpu 3.0 of 2 rounds",
			kfake.MiBPerSec, kfake.Cost.CPUSecPerGiB, len(kfake.Rounds))
	}

	one := [][]Result{{roundRow("strait", "produce", 100, 2.0)}}
	if got := medianRounds(one); !reflect.DeepEqual(got, one[0]) {
		t.Errorf("one round: %+v, want it as it is", got)
	}
}

// RESULTS.md says which rows are median rounds, and of how many, only when
// some are.
func TestResultsMarkdownRounds(t *testing.T) {
	res := loadResults(t, reportFixtures)
	md := markdownOf(res, "results.png")
	if strings.Contains(md, "rounds each") {
		t.Fatalf("rounds named for reports that ran once:\n%s", md)
	}
	for i := range res.Rows[:2] {
		res.Rows[i].Result.Rounds = []RoundFigure{{1, 0}, {2, 0}, {3, 0}}
	}
	md = markdownOf(res, "results.png")
	if want := "2 of the rows ran 3 rounds each (`--rounds`), Strait and kfake alternating round by round"; !strings.Contains(md, want) {
		t.Fatalf("markdown lacks %q:\n%s", want, md)
	}
}
