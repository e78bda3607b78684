package mirrormsg_test

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// TestRoundTrip encodes random values of every message at every version and
// decodes them back, with ReadFrom and UnsafeReadFrom: the value must come
// back deep-equal, nulls, empty strings, tagged fields and unknown tags
// included, and encoding it again must give the same bytes. A symmetric bug
// (the same field skipped both ways) passes here; TestGolden catches it.
func TestRoundTrip(t *testing.T) {
	const iterations = 300
	checked := 0
	for _, a := range mirrormsg.APIs {
		for version := a.Min; version <= a.Max; version++ {
			for _, proto := range []message{a.NewRequest(), a.NewResponse()} {
				rng := rand.New(rand.NewPCG(uint64(a.Key), uint64(version)))
				for i := range iterations {
					f := &filler{t: t, rng: rng, full: i == 0}
					v := newLike(proto)
					v.SetVersion(version)
					f.fillMessage(v)
					checkRoundTrip(t, v, version)
					checked++
				}
			}
		}
	}
	if want := 2 * iterations * len(mirrormsg.APIs); checked != want { // every RPC has only v0 today
		t.Fatalf("checked %d values, want %d", checked, want)
	}
}

func checkRoundTrip(t *testing.T, v message, version int16) {
	t.Helper()
	enc := v.AppendTo(nil)
	for _, unsafe := range []bool{false, true} {
		got := newLike(v)
		got.SetVersion(version)
		var err error
		if unsafe {
			err = got.(kmsg.UnsafeReadFrom).UnsafeReadFrom(enc)
		} else {
			err = got.ReadFrom(enc)
		}
		if err != nil {
			t.Fatalf("%s v%d (unsafe %t): decode: %v\nvalue %+v\nbytes % x", msgName(v), version, unsafe, err, v, enc)
		}
		if !reflect.DeepEqual(v, got) {
			t.Fatalf("%s v%d (unsafe %t): round trip differs\nsent %+v\ngot  %+v", msgName(v), version, unsafe, v, got)
		}
		if again := got.AppendTo(nil); !bytes.Equal(enc, again) {
			t.Fatalf("%s v%d: re-encoding differs\nfirst  % x\nsecond % x", msgName(v), version, enc, again)
		}
	}
}

// TestReadFromReplaces checks that ReadFrom resets a reused value: nothing
// of the previous message (a tagged field, an unknown tag) leaks into the
// next, as a server reusing request values would otherwise see.
func TestReadFromReplaces(t *testing.T) {
	for _, proto := range allMessages() {
		full := newLike(proto)
		(&filler{t: t, rng: rand.New(rand.NewPCG(1, 2)), full: true}).fillMessage(full)
		empty := newLike(proto)
		emptyBytes := empty.AppendTo(nil)
		if err := full.ReadFrom(emptyBytes); err != nil {
			t.Fatalf("%s: %v", msgName(proto), err)
		}
		if !reflect.DeepEqual(full, empty) {
			t.Fatalf("%s: ReadFrom kept old fields\ngot  %+v\nwant %+v", msgName(proto), full, empty)
		}
	}
}

// TestDefaults checks New* against the schemas' defaults for a few fields
// whose defaults matter to the handlers (-1 means "unknown" or "skip the
// check" in these schemas).
func TestDefaults(t *testing.T) {
	stop := mirrormsg.NewStopMirrorTopicsRequest()
	bump := mirrormsg.NewBumpLeaderEpochsRequestLeaderEpochState()
	write := mirrormsg.NewWriteMirrorStatesRequestPartitionData()
	desc := mirrormsg.NewDescribeMirrorsResponseDescribedMirror()
	part := mirrormsg.NewDescribeMirrorsResponsePartitionDetail()
	read := mirrormsg.NewReadMirrorStatesResponsePartitionResult()
	for _, c := range []struct {
		name      string
		got, want int64
	}{
		{"StopMirrorTopicsRequest.StateOffset", stop.StateOffset, -1},
		{"BumpLeaderEpochs LeaderEpochState.MinLeaderEpoch", int64(bump.MinLeaderEpoch), -1},
		{"WriteMirrorStates PartitionData.LeaderEpoch", int64(write.LeaderEpoch), -1},
		{"WriteMirrorStates PartitionData.StateEpoch", int64(write.StateEpoch), -1},
		{"WriteMirrorStates PartitionData.RetryAttempt", int64(write.RetryAttempt), -1},
		{"DescribeMirrors DescribedMirror.AuthorizedOperations", int64(desc.AuthorizedOperations), -2147483648},
		{"DescribeMirrors PartitionDetail.Lag", part.Lag, -1},
		{"DescribeMirrors PartitionDetail.OffsetsSkipped", part.OffsetsSkipped, 0},
		{"ReadMirrorStates PartitionResult.LastMirrorEpoch", int64(read.LastMirrorEpoch), -1},
		{"ReadMirrorStates PartitionResult.StateEpoch (tag)", int64(read.StateEpoch), -1},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	if write.ErrorMessage != nil || write.NonRetryable {
		t.Errorf("WriteMirrorStates PartitionData: ErrorMessage %v, NonRetryable %t; want nil, false", write.ErrorMessage, write.NonRetryable)
	}
	if d := mirrormsg.NewDescribeMirrorsRequest(); d.MirrorNames != nil {
		t.Errorf("DescribeMirrorsRequest.MirrorNames = %v, want nil (all mirrors)", d.MirrorNames)
	}
}
