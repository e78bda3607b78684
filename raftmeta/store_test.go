package raftmeta

import (
	"errors"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

func openTestStore(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := OpenStore(dir, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func testLog(i uint64) *raft.Log {
	return &raft.Log{Index: i, Term: i/3 + 1, Type: raft.LogCommand, Data: []byte{byte(i), 1, 2}}
}

func wantIndexes(t *testing.T, s *Store, first, last uint64) {
	t.Helper()
	f, err := s.FirstIndex()
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.LastIndex()
	if err != nil {
		t.Fatal(err)
	}
	if f != first || l != last {
		t.Fatalf("first, last = %d, %d; want %d, %d", f, l, first, last)
	}
}

// TestLogStore checks the raft.LogStore contract hashicorp/raft relies on
// (its InmemStore and raft-boltdb behave the same way).
func TestLogStore(t *testing.T) {
	dir := t.TempDir()
	s := openTestStore(t, dir)

	// An empty store answers 0 for both ends and ErrLogNotFound.
	wantIndexes(t, s, 0, 0)
	var l raft.Log
	if err := s.GetLog(1, &l); !errors.Is(err, raft.ErrLogNotFound) {
		t.Fatalf("GetLog on empty store: %v", err)
	}

	if err := s.StoreLog(testLog(1)); err != nil {
		t.Fatal(err)
	}
	batch := []*raft.Log{testLog(2), testLog(3), testLog(4), testLog(5)}
	batch[1].Type = raft.LogConfiguration
	batch[2].Extensions = []byte("ext")
	batch[2].AppendedAt = time.Unix(1700000000, 123456789)
	batch[3].Data = nil
	if err := s.StoreLogs(batch); err != nil {
		t.Fatal(err)
	}
	wantIndexes(t, s, 1, 5)
	for _, want := range append([]*raft.Log{testLog(1)}, batch...) {
		var got raft.Log
		if err := s.GetLog(want.Index, &got); err != nil {
			t.Fatalf("GetLog(%d): %v", want.Index, err)
		}
		if !got.AppendedAt.Equal(want.AppendedAt) {
			t.Fatalf("log %d AppendedAt = %v, want %v", want.Index, got.AppendedAt, want.AppendedAt)
		}
		got.AppendedAt, want.AppendedAt = time.Time{}, time.Time{}
		if !reflect.DeepEqual(&got, want) {
			t.Fatalf("GetLog(%d) = %+v, want %+v", want.Index, got, *want)
		}
	}
	if err := s.GetLog(6, &l); !errors.Is(err, raft.ErrLogNotFound) {
		t.Fatalf("GetLog past the end: %v", err)
	}

	// DeleteRange is inclusive; a suffix delete is how raft truncates a
	// conflicting tail, a prefix delete how it compacts.
	if err := s.DeleteRange(4, 5); err != nil {
		t.Fatal(err)
	}
	wantIndexes(t, s, 1, 3)
	if err := s.GetLog(4, &l); !errors.Is(err, raft.ErrLogNotFound) {
		t.Fatalf("GetLog of a deleted entry: %v", err)
	}
	if err := s.DeleteRange(1, 2); err != nil {
		t.Fatal(err)
	}
	wantIndexes(t, s, 3, 3)
	// Overwriting an index replaces the entry.
	over := testLog(3)
	over.Term = 99
	if err := s.StoreLog(over); err != nil {
		t.Fatal(err)
	}
	if err := s.GetLog(3, &l); err != nil || l.Term != 99 {
		t.Fatalf("overwritten entry: term %d, %v", l.Term, err)
	}
	if err := s.StoreLogs([]*raft.Log{testLog(10), testLog(11)}); err != nil {
		t.Fatal(err)
	}
	wantIndexes(t, s, 3, 11)
	if err := s.DeleteRange(0, math.MaxUint64); err != nil {
		t.Fatal(err)
	}
	wantIndexes(t, s, 0, 0)

	// Entries survive close and reopen.
	if err := s.StoreLogs([]*raft.Log{testLog(20), testLog(21), testLog(22)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.GetLog(20, &l); !errors.Is(err, ErrStoreClosed) {
		t.Fatalf("GetLog after Close: %v", err)
	}
	if _, err := s.LastIndex(); !errors.Is(err, ErrStoreClosed) {
		t.Fatalf("LastIndex after Close: %v", err)
	}
	s = openTestStore(t, dir)
	defer s.Close()
	wantIndexes(t, s, 20, 22)
	if err := s.GetLog(21, &l); err != nil || !reflect.DeepEqual(l.Data, testLog(21).Data) || l.Index != 21 {
		t.Fatalf("after reopen: %+v, %v", l, err)
	}
}

func TestStableStore(t *testing.T) {
	dir := t.TempDir()
	s := openTestStore(t, dir)

	// hashicorp/raft recognises a missing key by its text.
	if _, err := s.Get([]byte("CurrentTerm")); err == nil || err.Error() != "not found" {
		t.Fatalf("Get of a missing key: %v", err)
	}
	if v, err := s.GetUint64([]byte("LastVoteTerm")); err == nil || err.Error() != "not found" || v != 0 {
		t.Fatalf("GetUint64 of a missing key: %d, %v", v, err)
	}
	if err := s.Set([]byte("LastVoteCand"), []byte("node-1")); err != nil {
		t.Fatal(err)
	}
	if err := s.SetUint64([]byte("CurrentTerm"), 42); err != nil {
		t.Fatal(err)
	}
	if err := s.SetUint64([]byte("CurrentTerm"), 43); err != nil {
		t.Fatal(err)
	}
	// Stable keys and log entries live side by side without mixing.
	if err := s.StoreLog(testLog(1)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// A term a heartbeat records after the quorum closed (raft answers
	// heartbeats on the transport's goroutine, which its Shutdown does not
	// join) is dropped, not an error raft would panic on.
	if err := s.SetUint64([]byte("CurrentTerm"), 44); err != nil {
		t.Fatalf("SetUint64 after Close: %v", err)
	}
	if _, err := s.Get([]byte("CurrentTerm")); !errors.Is(err, ErrStoreClosed) {
		t.Fatalf("Get after Close: %v", err)
	}
	s = openTestStore(t, dir)
	defer s.Close()
	if v, err := s.Get([]byte("LastVoteCand")); err != nil || string(v) != "node-1" {
		t.Fatalf("Get after reopen: %q, %v", v, err)
	}
	if v, err := s.GetUint64([]byte("CurrentTerm")); err != nil || v != 43 {
		t.Fatalf("GetUint64 after reopen: %d, %v", v, err)
	}
	wantIndexes(t, s, 1, 1)
	if err := s.Set([]byte("short"), []byte{1}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetUint64([]byte("short")); err == nil {
		t.Fatal("GetUint64 of a 1-byte value succeeded")
	}
}

func TestDecodeLogRejectsGarbage(t *testing.T) {
	var l raft.Log
	good := encodeLog(nil, testLog(1))
	if err := decodeLog(good, &l); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]byte{nil, good[:len(good)-1], append(append([]byte{}, good...), 7)} {
		if err := decodeLog(bad, &l); err == nil {
			t.Errorf("decodeLog(%x) succeeded", bad)
		}
	}
}
