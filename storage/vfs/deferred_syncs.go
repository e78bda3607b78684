package vfs

import "sync/atomic"

// SyncDeferral switches the syncs of an FS made by WithDeferredSyncs off
// and on.
type SyncDeferral struct{ on atomic.Bool }

// Defer turns the deferral on (the FS's syncs do nothing) or off.
func (d *SyncDeferral) Defer(on bool) { d.on.Store(on) }

// Deferred reports whether the deferral is on.
func (d *SyncDeferral) Deferred() bool { return d.on.Load() }

// WithDeferredSyncs wraps fsys so that its syncs can be left to one
// FSSync of the whole file system: while the deferral is on, SyncDir does
// nothing and a file created or opened for writing syncs nothing (a file
// opened before is fsys's own and syncs as always). Off, the FS is fsys:
// the files it opens are fsys's, with whatever more they implement
// (FD, Preallocator). A storage engine shutting down thousands of logs
// writes each one's last files with the deferral on, then syncs the file
// system once, instead of fsyncing every file in turn.
func WithDeferredSyncs(fsys FS) (FS, *SyncDeferral) {
	d := &deferringFS{FS: fsys, d: &SyncDeferral{}}
	if _, ok := fsys.(Linker); ok {
		return &deferringLinkFS{d}, d.d
	}
	return d, d.d
}

type deferringFS struct {
	FS
	d *SyncDeferral
}

func (f *deferringFS) Create(name string) (File, error) { return f.wrap(f.FS.Create(name)) }

func (f *deferringFS) OpenReadWrite(name string) (File, error) {
	return f.wrap(f.FS.OpenReadWrite(name))
}

func (f *deferringFS) wrap(file File, err error) (File, error) {
	if err != nil || !f.d.Deferred() {
		return file, err
	}
	return unsyncedFile{file}, nil
}

func (f *deferringFS) SyncDir(dir string) error {
	if f.d.Deferred() {
		return nil
	}
	return f.FS.SyncDir(dir)
}

// OpenFSSync implements FSSyncer for fsys's file system.
func (f *deferringFS) OpenFSSync(dir string) (FSSync, error) { return OpenFSSync(f.FS, dir) }

type deferringLinkFS struct{ *deferringFS }

// Link implements Linker.
func (f *deferringLinkFS) Link(oldname, newname string) error {
	return f.FS.(Linker).Link(oldname, newname)
}

// unsyncedFile is a file opened while syncs are deferred.
type unsyncedFile struct{ File }

func (unsyncedFile) Sync() error { return nil }
