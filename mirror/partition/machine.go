package partition

import (
	"slices"
	"time"
)

// Machine is one mirror partition's state machine. It is not safe for
// concurrent use: its driver owns it.
type Machine struct {
	cfg Config
	now time.Time // the time of the event being stepped
	seq uint64

	leader      bool
	leaderEpoch int32
	mirror      string
	desired     Desired

	// The generation: everything below is reset when leadership changes.
	known   bool   // rec was read (or written) under this leader epoch
	rec     Record // the record as last confirmed by the coordinator
	access  Access
	fetcher fetcherState
	logPos  logPos
	// epochWanted is the highest source epoch the fetcher reported ahead
	// of the leader epoch.
	epochWanted  int32
	failure      *failure
	prog         progress
	stepFailures int
	await        *Effect // the one Reply effect outstanding
	gated        *Effect // the step a RetryStep timer holds back
	lastErr      string

	out []Effect
}

// Access is the write access the machine has set for the partition.
type Access int8

const (
	// AccessUnknown: not yet decided under this leader epoch.
	AccessUnknown Access = iota
	AccessReadOnly
	AccessWritable
)

func (a Access) String() string {
	switch a {
	case AccessReadOnly:
		return "read-only"
	case AccessWritable:
		return "writable"
	}
	return "unknown"
}

type fetcherState struct {
	active    bool // AddFetcher emitted and not removed since
	ref       Ref
	started   bool // AddFetcher answered
	startedAt time.Time
}

// logPos is the local log end as last reported, valid until a fetcher may
// have appended.
type logPos struct {
	known  bool
	offset int64
	epoch  int32
}

type failure struct {
	msg          string
	nonRetryable bool
	attempt      int32
}

// progress is what the current phase has done; reset whenever the record's
// state changes or leadership changes.
type progress struct {
	// startChecked: CheckExistingRecords allowed this start; its LME and
	// source log start carry over the PREPARING write, so the truncation
	// is the one the check judged.
	startChecked bool
	lmeKnown     bool
	lme          int32
	srcLogStart  int64
	truncated    bool
	isrDone      bool

	removed      bool
	removedLEO   int64
	removedEpoch int32

	bumpAccepted int32 // the largest BumpLeaderEpoch minimum the controller accepted

	aborted  bool // AbortOpenTransactions answered
	pidReset bool
	retryDue bool
}

// New returns a machine for a partition this broker is not (yet) leading.
func New(cfg Config) (*Machine, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Machine{cfg: cfg, leaderEpoch: -1, desired: DesiredNone, rec: EmptyRecord()}, nil
}

// Ready is the output of the steps since the last Advance.
type Ready struct {
	Effects []Effect
}

// HasReady reports whether Ready has effects to perform.
func (m *Machine) HasReady() bool { return len(m.out) > 0 }

// Ready returns the effects emitted since the last Advance, in order.
func (m *Machine) Ready() Ready { return Ready{Effects: slices.Clone(m.out)} }

// Advance acknowledges the effects Ready returned: the driver has taken
// them.
func (m *Machine) Advance() { m.out = m.out[:0] }

// Status is the machine's view, for DescribeMirrors, metrics and tests.
type Status struct {
	Leader      bool
	LeaderEpoch int32
	Mirror      string
	Desired     Desired
	// Known: Record was read or written under this leader epoch.
	Known bool
	// Record is the __mirror_state record as last confirmed; Record.State is
	// the partition's state.
	Record   Record
	Access   Access
	Fetching bool
	// Waiting is the effect the machine waits on, if any.
	Waiting   *Effect
	LastError string
}

// Status returns the machine's current view.
func (m *Machine) Status() Status {
	st := Status{Leader: m.leader, LeaderEpoch: m.leaderEpoch, Mirror: m.mirror, Desired: m.desired, Known: m.known,
		Record: m.rec, Access: m.access, Fetching: m.fetcher.active, LastError: m.lastErr}
	if m.await != nil {
		w := *m.await
		st.Waiting = &w
	}
	return st
}
