//go:build linux

package vfs

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// OpenFSSync implements FSSyncer with syncfs(2) on a descriptor of dir.
// The descriptor is opened now: since Linux 5.8 syncfs reports a write-back
// error of the file system that happened after it was opened.
func (OS) OpenFSSync(dir string) (FSSync, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	return osFSSync{fd: fd, dir: dir}, nil
}

type osFSSync struct {
	fd  int
	dir string
}

func (s osFSSync) Sync() error {
	if err := unix.Syncfs(s.fd); err != nil {
		return fmt.Errorf("syncfs %s: %w", s.dir, err)
	}
	return nil
}

func (s osFSSync) Close() error { return unix.Close(s.fd) }
