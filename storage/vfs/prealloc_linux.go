//go:build linux

package vfs

import "golang.org/x/sys/unix"

func (f osFile) Preallocate(off, n int64) error {
	return unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_KEEP_SIZE, off, n)
}

func (f osFile) ReleasePreallocated(size int64) error { return f.Truncate(size) }
