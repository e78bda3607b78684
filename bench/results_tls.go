package bench

import (
	"fmt"
	"io"
	"strings"
)

// tlsPair is a row run over TLS with its plaintext twin: the same
// workload and settings, in the same run of `make bench`.
type tlsPair struct {
	tls, plain *Row
}

// tlsPairs pairs each TLS row with the first plaintext row of its name
// without the " tls" suffix; a TLS row without a twin is left out.
func (res *Results) tlsPairs() []tlsPair {
	var out []tlsPair
	for i := range res.Rows {
		r := &res.Rows[i]
		if !r.TLS {
			continue
		}
		name := strings.TrimSuffix(r.Workload, " "+tlsSuffix)
		for j := range res.Rows {
			if p := &res.Rows[j]; !p.TLS && p.Workload == name {
				out = append(out, tlsPair{tls: r, plain: p})
				break
			}
		}
	}
	return out
}

// writeTLSMarkdown is what TLS costs: each TLS row beside its plaintext
// twin, Strait's and kfake's, as ratios of throughput and of the broker's
// CPU per GiB.
func (res *Results) writeTLSMarkdown(w io.Writer) {
	pairs := res.tlsPairs()
	if len(pairs) == 0 {
		return
	}
	fmt.Fprintf(w, "\n## TLS\n\n")
	fmt.Fprintf(w, "Each workload over TLS (`--tls`: an SSL listener, TLS 1.3, a P-256 certificate made for the run; kfake with\n")
	fmt.Fprintf(w, "kfake.TLS) beside the same workload in plaintext from the same run. tls/plain: TLS throughput over plaintext\n")
	fmt.Fprintf(w, "(below 1: TLS is slower); cpu tls/plain: CPU per GiB over TLS over plaintext's (above 1: TLS costs more).\n")
	fmt.Fprintf(w, "Strait's plaintext fetch uses sendfile; over TLS it copies and encrypts, and its requests (not its responses) pass through a relay's socketpair.\n\n")
	fmt.Fprintf(w, "| workload | broker | plain MiB/s | tls MiB/s | tls/plain | plain cpu s/GiB | tls cpu s/GiB | cpu tls/plain | kfake plain MiB/s | kfake tls MiB/s | kfake tls/plain | kfake plain cpu s/GiB | kfake tls cpu s/GiB | kfake cpu tls/plain |\n")
	fmt.Fprintf(w, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, p := range pairs {
		cells := []string{p.tls.Workload, p.tls.Broker}
		cells = append(cells, tlsCostCells(p.plain.Result, p.tls.Result)...)
		cells = append(cells, tlsCostCells(p.plain.Peer, p.tls.Peer)...)
		fmt.Fprintln(w, "| "+strings.Join(cells, " | ")+" |")
	}
}

// tlsCostCells are plaintext and TLS throughput, their ratio, plaintext
// and TLS CPU per GiB and their ratio; "-" where a side is missing.
func tlsCostCells(plain, tls *Result) []string {
	cells := []string{"-", "-", "-", "-", "-", "-"}
	if plain == nil || tls == nil {
		return cells
	}
	cells[0], cells[1] = fmt.Sprintf("%.1f", plain.MiBPerSec), fmt.Sprintf("%.1f", tls.MiBPerSec)
	cells[2] = ratioCell(div(tls.MiBPerSec, plain.MiBPerSec))
	pc, _ := plain.combinedCost()
	tc, _ := tls.combinedCost()
	if pc != nil && tc != nil {
		cells[3], cells[4] = fmt.Sprintf("%.2f", pc.CPUSecPerGiB), fmt.Sprintf("%.2f", tc.CPUSecPerGiB)
		cells[5] = ratioCell(div(tc.CPUSecPerGiB, pc.CPUSecPerGiB))
	}
	return cells
}
