package bench

import (
	"sync/atomic"
	"time"
)

const (
	mib = 1 << 20
	gib = 1 << 30
)

// Result is what one workload measured against one broker.
type Result struct {
	Workload string `json:"workload"` // produce, prefill, catch-up, tail, e2e
	Broker   string `json:"broker"`   // the label of the broker measured

	Records  int64 `json:"records"`            // acknowledged (produce) or consumed records
	Bytes    int64 `json:"bytes"`              // value bytes of those records
	Produced int64 `json:"produced,omitempty"` // tail and e2e: records produced, to compare with Records
	Errors   int64 `json:"errors"`             // records that failed
	// FirstError is the first failure, when Errors > 0.
	FirstError string `json:"first_error,omitempty"`

	Elapsed       time.Duration `json:"elapsed_ns"`
	MiBPerSec     float64       `json:"mib_per_sec"`
	RecordsPerSec float64       `json:"records_per_sec"`

	// Transactions are the transactions a transactional workload
	// committed (Records counts only their records); TxnLatency is each
	// one's time from BeginTransaction to the commit's answer.
	Transactions       int64    `json:"transactions,omitempty"`
	TransactionsPerSec float64  `json:"transactions_per_sec,omitempty"`
	TxnLatency         *Latency `json:"txn_latency,omitempty"`

	// Duplicates are records a group catch-up read more than once (a
	// partition moved before its offsets were committed); FirstRecord is
	// how long its members took to read their first record (joining the
	// group and the first fetch).
	Duplicates  int64         `json:"duplicates,omitempty"`
	FirstRecord time.Duration `json:"first_record_ns,omitempty"`

	// Latency is produce latency (send to acknowledgement) or, for e2e,
	// produce to consume; nil for reads.
	Latency *Latency `json:"latency,omitempty"`
	// Cost is nil unless the broker's pid is known.
	Cost *BrokerCost `json:"broker_cost,omitempty"`
	// NodeCosts are the cost of each node of a cluster (ProduceConfig's
	// NodePIDs), in node order; CPU per GiB divides each node's CPU by
	// the bytes the cluster acknowledged.
	NodeCosts []BrokerCost `json:"node_costs,omitempty"`
	// Profiles are the broker's profile files over the workload, when
	// asked for (--profile DIR, Profiler).
	Profiles *Profiles `json:"profiles,omitempty"`
	// Rounds are the figures of every round when the workload ran more
	// than once (--rounds); the rest of the Result is the median round's
	// (rounds.go).
	Rounds []RoundFigure `json:"rounds,omitempty"`
}

// Latency summarises a Histogram of nanoseconds.
type Latency struct {
	Count uint64        `json:"count"`
	P50   time.Duration `json:"p50_ns"`
	P99   time.Duration `json:"p99_ns"`
	P999  time.Duration `json:"p999_ns"`
	Max   time.Duration `json:"max_ns"`
	Mean  time.Duration `json:"mean_ns"`
}

func summarize(h *Histogram) *Latency {
	return &Latency{
		Count: h.Count(),
		P50:   time.Duration(h.Quantile(0.50)),
		P99:   time.Duration(h.Quantile(0.99)),
		P999:  time.Duration(h.Quantile(0.999)),
		Max:   time.Duration(h.Max()),
		Mean:  time.Duration(h.Mean()),
	}
}

// BrokerCost is the broker process's CPU and memory over one workload.
type BrokerCost struct {
	PID          int     `json:"pid"`
	CPUSeconds   float64 `json:"cpu_seconds"`
	CPUSecPerGiB float64 `json:"cpu_sec_per_gib"`
	RSSBytes     int64   `json:"rss_bytes"`      // VmRSS at the end of the workload
	MaxRSSBytes  int64   `json:"max_rss_bytes"`  // the largest VmRSS sampled during it
	PeakRSSBytes int64   `json:"peak_rss_bytes"` // VmHWM: peak since the broker started
}

func (r *Result) finish(elapsed time.Duration) {
	r.Elapsed = elapsed
	if s := elapsed.Seconds(); s > 0 {
		r.MiBPerSec = float64(r.Bytes) / mib / s
		r.RecordsPerSec = float64(r.Records) / s
		r.TransactionsPerSec = float64(r.Transactions) / s
	}
}

// costMeter samples a broker process at the start and end of a workload and
// every progress tick in between (VmRSS has no per-window peak of its own).
type costMeter struct {
	r      *ProcReader
	pid    int
	start  ProcSample
	maxRSS atomic.Int64
}

// startCost returns nil when pid is 0: the broker's cost is unknown.
func startCost(r *ProcReader, pid int) (*costMeter, error) {
	if pid == 0 {
		return nil, nil
	}
	if r == nil {
		r = NewProcReader()
	}
	s, err := r.Read(pid)
	if err != nil {
		return nil, err
	}
	m := &costMeter{r: r, pid: pid, start: s}
	m.maxRSS.Store(s.RSSBytes)
	return m, nil
}

func (m *costMeter) sample() {
	if m == nil {
		return
	}
	if s, err := m.r.Read(m.pid); err == nil {
		m.noteRSS(s.RSSBytes)
	}
}

func (m *costMeter) noteRSS(v int64) {
	for cur := m.maxRSS.Load(); v > cur && !m.maxRSS.CompareAndSwap(cur, v); cur = m.maxRSS.Load() {
	}
}

// costMeters samples several processes, the nodes of a cluster.
type costMeters []*costMeter

// startCosts meters each of pids; a 0 pid is left out.
func startCosts(r *ProcReader, pids []int) (costMeters, error) {
	var ms costMeters
	for _, pid := range pids {
		m, err := startCost(r, pid)
		if err != nil {
			return nil, err
		}
		if m != nil {
			ms = append(ms, m)
		}
	}
	return ms, nil
}

func (ms costMeters) sample() {
	for _, m := range ms {
		m.sample()
	}
}

// finish is costMeter.finish of each meter.
func (ms costMeters) finish(bytes int64) ([]BrokerCost, error) {
	var out []BrokerCost
	for _, m := range ms {
		c, err := m.finish(bytes)
		if err != nil {
			return out, err
		}
		out = append(out, *c)
	}
	return out, nil
}

// finish attributes the CPU spent since start to bytes moved.
func (m *costMeter) finish(bytes int64) (*BrokerCost, error) {
	if m == nil {
		return nil, nil
	}
	s, err := m.r.Read(m.pid)
	if err != nil {
		return nil, err
	}
	m.noteRSS(s.RSSBytes)
	cpu := (s.CPU - m.start.CPU).Seconds()
	c := &BrokerCost{
		PID:          m.pid,
		CPUSeconds:   cpu,
		RSSBytes:     s.RSSBytes,
		MaxRSSBytes:  m.maxRSS.Load(),
		PeakRSSBytes: s.PeakBytes,
	}
	if bytes > 0 {
		c.CPUSecPerGiB = cpu / (float64(bytes) / gib)
	}
	return c, nil
}

// combinedCost is r's broker cost: a cluster's nodes combined (CPU per GiB
// summed, the largest max RSS) when it has them, else its one process's.
func (r *Result) combinedCost() (*BrokerCost, int) {
	if len(r.NodeCosts) == 0 {
		return r.Cost, 0
	}
	sum := &BrokerCost{}
	for _, c := range r.NodeCosts {
		sum.CPUSeconds += c.CPUSeconds
		sum.CPUSecPerGiB += c.CPUSecPerGiB
		sum.RSSBytes += c.RSSBytes
		sum.MaxRSSBytes = max(sum.MaxRSSBytes, c.MaxRSSBytes)
		sum.PeakRSSBytes = max(sum.PeakRSSBytes, c.PeakRSSBytes)
	}
	return sum, len(r.NodeCosts)
}
