package vfs

import (
	"errors"
	"math/rand/v2"
	"testing"
)

func write(t *testing.T, fs FS, name, data string, sync bool) File {
	t.Helper()
	f, err := fs.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(data), 0); err != nil {
		t.Fatal(err)
	}
	if sync {
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func content(t *testing.T, fs FS, name string) string {
	t.Helper()
	b, err := ReadFile(fs, name)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

func TestMemCrashKeepsOnlySyncedBytesAndNames(t *testing.T) {
	m := NewMem()
	if err := MkdirAllDurable(m, "/a/b"); err != nil {
		t.Fatal(err)
	}
	f := write(t, m, "/a/b/synced", "hello", true)
	f.WriteAt([]byte(" world"), 5) // not synced
	write(t, m, "/a/b/unsynced-name", "x", true)
	m.SyncDir("/a/b")
	write(t, m, "/a/b/no-dir-sync", "y", true) // data synced, name not

	c := m.CrashClone(CrashOptions{})
	if got := content(t, c, "/a/b/synced"); got != "hello" {
		t.Fatalf("synced file after crash: %q", got)
	}
	if got := content(t, c, "/a/b/unsynced-name"); got != "x" {
		t.Fatalf("file whose name was synced: %q", got)
	}
	if _, err := c.Stat("/a/b/no-dir-sync"); !IsNotExist(err) {
		t.Fatal("a name never made durable by SyncDir survived the crash")
	}
	// The live view is unaffected.
	if got := content(t, m, "/a/b/synced"); got != "hello world" {
		t.Fatalf("live view %q", got)
	}
}

func TestMemCrashRenameNeedsDirSync(t *testing.T) {
	m := NewMem()
	MkdirAllDurable(m, "/d")
	write(t, m, "/d/old", "v1", true)
	m.SyncDir("/d")
	m.Rename("/d/old", "/d/new")
	c := m.CrashClone(CrashOptions{})
	if content(t, c, "/d/old") != "v1" {
		t.Fatal("unsynced rename must not be durable")
	}
	m.SyncDir("/d")
	c = m.CrashClone(CrashOptions{})
	if content(t, c, "/d/new") != "v1" {
		t.Fatal("synced rename lost")
	}
	if _, err := c.Stat("/d/old"); !IsNotExist(err) {
		t.Fatal("old name survived a synced rename")
	}
}

func TestMemCrashTornTailIsAPrefix(t *testing.T) {
	m := NewMem()
	MkdirAllDurable(m, "/d")
	f := write(t, m, "/d/f", "abc", true)
	m.SyncDir("/d")
	f.WriteAt([]byte("defghij"), 3)
	seen := map[string]bool{}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200; i++ {
		got := content(t, m.CrashClone(CrashOptions{Rand: rng}), "/d/f")
		if len(got) < 3 || got != "abcdefghij"[:len(got)] {
			t.Fatalf("crash kept %q, not a prefix extending the synced bytes", got)
		}
		seen[got] = true
	}
	if len(seen) < 5 {
		t.Fatalf("only %d distinct torn tails in 200 crashes", len(seen))
	}
}

func TestWriteFileAtomicSurvivesCrash(t *testing.T) {
	m := NewMem()
	MkdirAllDurable(m, "/d")
	if err := WriteFileAtomic(m, "/d", "ckpt", []byte("one")); err != nil {
		t.Fatal(err)
	}
	if content(t, m.CrashClone(CrashOptions{}), "/d/ckpt") != "one" {
		t.Fatal("atomic write not durable")
	}
	// A failure before the rename leaves the old content.
	e := WithErrors(m, OnOp(OpRename, 0))
	if err := WriteFileAtomic(e, "/d", "ckpt", []byte("two")); !errors.Is(err, ErrInjected) {
		t.Fatalf("err %v", err)
	}
	if content(t, m.CrashClone(CrashOptions{}), "/d/ckpt") != "one" {
		t.Fatal("failed atomic write changed the file")
	}
}

func TestErrorFSOnOp(t *testing.T) {
	e := WithErrors(NewMem(), OnOp(OpSync, 1))
	f, _ := e.Create("/f")
	if err := f.Sync(); err != nil {
		t.Fatalf("first sync should pass: %v", err)
	}
	if err := f.Sync(); !errors.Is(err, ErrInjected) {
		t.Fatalf("second sync: %v", err)
	}
	e.SetInjector(nil)
	if err := f.Sync(); err != nil {
		t.Fatalf("after clearing the injector: %v", err)
	}
}

func TestMemFileSemantics(t *testing.T) {
	m := NewMem()
	if _, err := m.Create("/missing/f"); !IsNotExist(err) {
		t.Fatalf("create in a missing dir: %v", err)
	}
	f := write(t, m, "/f", "0123456789", false)
	if err := f.Truncate(4); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 10)
	n, err := f.ReadAt(buf, 0)
	if n != 4 || err == nil {
		t.Fatalf("read after truncate: %d %v", n, err)
	}
	m.Remove("/f")
	// An open handle keeps working after its name is removed, as on POSIX.
	if _, err := f.ReadAt(buf[:4], 0); err != nil {
		t.Fatalf("read after remove: %v", err)
	}
	f.Close()
	if _, err := f.ReadAt(buf, 0); err == nil {
		t.Fatal("read after close must fail")
	}
	ro, _ := m.Create("/g")
	ro.Close()
	ro, _ = m.Open("/g")
	if _, err := ro.WriteAt([]byte("x"), 0); err == nil {
		t.Fatal("write through a read-only handle must fail")
	}
}

// TestLinkSharesBytes: on both filesystems a hard link is a second name for
// the same bytes (a write or truncation through one shows through the
// other), Stat counts the names, and removing one leaves the other. The
// storage engine's copy-on-write relies on exactly this.
func TestLinkSharesBytes(t *testing.T) {
	for _, tc := range []struct {
		name string
		fs   interface {
			FS
			Linker
		}
		dir string
	}{{"mem", NewMem(), "/d"}, {"os", OS{}, t.TempDir()}} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.fs.MkdirAll(tc.dir); err != nil {
				t.Fatal(err)
			}
			a, b := tc.dir+"/a", tc.dir+"/b"
			f := write(t, tc.fs, a, "hello", true)
			defer f.Close()
			if st, err := tc.fs.Stat(a); err != nil || st.Links != 1 {
				t.Fatalf("before link: %+v, %v; want 1 link", st, err)
			}
			if err := tc.fs.Link(a, b); err != nil {
				t.Fatal(err)
			}
			if err := tc.fs.Link(a, b); err == nil {
				t.Fatal("link over an existing name succeeded")
			}
			if st, err := tc.fs.Stat(b); err != nil || st.Links != 2 || st.Size != 5 {
				t.Fatalf("after link: %+v, %v; want 2 links, 5 bytes", st, err)
			}
			if err := f.Truncate(2); err != nil {
				t.Fatal(err)
			}
			if got := content(t, tc.fs, b); got != "he" {
				t.Fatalf("b after truncating a = %q, want the shared %q", got, "he")
			}
			if err := tc.fs.Remove(a); err != nil {
				t.Fatal(err)
			}
			if st, err := tc.fs.Stat(b); err != nil || st.Links != 1 || content(t, tc.fs, b) != "he" {
				t.Fatalf("b after removing a: %+v, %v; want 1 link, %q", st, err, "he")
			}
		})
	}
}
