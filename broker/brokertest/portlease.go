package brokertest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// A portLease keeps a port drawn by one test process from being drawn by
// another until the first is done with it. `go test ./...` runs several
// packages' test binaries side by side, each drawing its nodes' ports from
// the same range; the listen check alone cannot tell a port another
// process drew a moment ago and has not bound yet from a free one, and
// the node that binds second fails with "address already in use" (seen in
// CI: broker/e2e's TestMirrorFailoverThroughTheBinary, node 2's PLAINTEXT
// port, while other packages' clusters started).
//
// A lease is an exclusive flock on a file named after the port, in a
// directory all test processes of this user share. The kernel drops the
// lock when its process ends however it ends, so a killed test binary
// leaves no lease behind, and nothing has to judge whether a holder still
// lives. The file holds the holder's pid, for whoever looks.
type portLease struct {
	f    *os.File
	path string
}

// leaseDir is the shared directory of leases.
func leaseDir() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("strait-test-ports-%d", os.Getuid()))
}

// leasePort takes port's lease for this process; false when another lease
// holds it (of this process or another).
func leasePort(port int) (*portLease, bool, error) {
	dir := leaseDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, false, fmt.Errorf("port leases: %w", err)
	}
	path := filepath.Join(dir, strconv.Itoa(port))
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600) // O_CLOEXEC: nodes started later do not inherit it
		if err != nil {
			return nil, false, fmt.Errorf("port leases: %w", err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, false, nil
			}
			return nil, false, fmt.Errorf("port leases: flock %s: %w", path, err)
		}
		// A holder removes its file before it unlocks (release), so
		// the file locked here may be one already removed: then the
		// path names another file, or none, and the lock guards
		// nothing. Look again.
		if !samePath(f, path) {
			f.Close()
			continue
		}
		if err := f.Truncate(0); err == nil {
			_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())), 0)
		}
		return &portLease{f: f, path: path}, true, nil
	}
}

// samePath reports whether path still names the open file f.
func samePath(f *os.File, path string) bool {
	held, err := f.Stat()
	if err != nil {
		return false
	}
	now, err := os.Stat(path)
	return err == nil && os.SameFile(held, now)
}

// release gives the port back: the file goes first, then the lock, so a
// process that locked the old file finds it gone (leasePort).
func (l *portLease) release() {
	os.Remove(l.path)
	l.f.Close()
}

func releaseAll(leases []*portLease) {
	for _, l := range leases {
		l.release()
	}
}
