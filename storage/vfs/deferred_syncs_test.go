package vfs

import "testing"

// TestDeferredSyncs: with the deferral on, a file created or opened for
// writing syncs nothing and SyncDir does nothing, so a crash keeps none of
// it; a file opened before the deferral syncs as always; an FSSync then
// makes everything durable. Off, the FS is the one it wraps (links too).
func TestDeferredSyncs(t *testing.T) {
	mem := NewMem()
	fsys, d := WithDeferredSyncs(mem)
	if _, ok := fsys.(Linker); !ok {
		t.Fatal("the wrapped MemFS lost Link")
	}
	if err := fsys.MkdirAll("/d"); err != nil {
		t.Fatal(err)
	}
	before, err := fsys.Create("/d/before")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"/", "/d"} {
		if err := fsys.SyncDir(dir); err != nil {
			t.Fatal(err)
		}
	}
	d.Defer(true)
	after, err := fsys.Create("/d/after")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []File{before, after} {
		if _, err := f.WriteAt([]byte("data"), 0); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	if err := fsys.SyncDir("/d"); err != nil {
		t.Fatal(err)
	}
	crashed := mem.CrashClone(CrashOptions{})
	if b, err := ReadFile(crashed, "/d/before"); err != nil || string(b) != "data" {
		t.Errorf("a file opened before the deferral, synced: %q, %v after a crash", b, err)
	}
	if _, err := crashed.Stat("/d/after"); !IsNotExist(err) {
		t.Errorf("a file created while deferred, its directory \"synced\": %v after a crash, want gone", err)
	}
	s, err := OpenFSSync(fsys, "/d")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	d.Defer(false)
	crashed = mem.CrashClone(CrashOptions{})
	if b, err := ReadFile(crashed, "/d/after"); err != nil || string(b) != "data" {
		t.Errorf("after the file system sync: %q, %v after a crash", b, err)
	}
	if f, err := fsys.Create("/d/later"); err != nil {
		t.Fatal(err)
	} else if _, wrapped := f.(unsyncedFile); wrapped {
		t.Error("a file created with the deferral off is wrapped")
	}
}
