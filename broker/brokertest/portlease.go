package brokertest

import (
	"errors"
	"fmt"
	"io/fs"
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
// A lease is a file named after the port in a directory all test
// processes of this user share, created exclusively and holding the pid
// of its process; a lease whose process is gone (a killed test binary) is
// taken over.
type portLease struct{ path string }

// leaseDir is the shared directory of leases.
func leaseDir() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("strait-test-ports-%d", os.Getuid()))
}

// leasePort takes port's lease for this process; false when a live
// process holds it.
func leasePort(port int) (*portLease, bool, error) {
	dir := leaseDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, false, fmt.Errorf("port leases: %w", err)
	}
	path := filepath.Join(dir, strconv.Itoa(port))
	for range 2 { // the second try follows taking over a dead process's lease
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			_, werr := f.WriteString(strconv.Itoa(os.Getpid()))
			if cerr := f.Close(); werr == nil {
				werr = cerr
			}
			if werr != nil {
				os.Remove(path)
				return nil, false, fmt.Errorf("port leases: %w", werr)
			}
			return &portLease{path: path}, true, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, false, fmt.Errorf("port leases: %w", err)
		}
		if leaseHolderAlive(path) {
			return nil, false, nil
		}
		// Gone: remove its lease and try once more (another process
		// may take it over first; then the port is theirs).
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, false, fmt.Errorf("port leases: %w", err)
		}
	}
	return nil, false, nil
}

// leaseHolderAlive reports whether the process named in the lease at path
// still runs. A lease being written (empty for a moment) counts as held.
func leaseHolderAlive(path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return !errors.Is(err, fs.ErrNotExist)
	}
	pid, err := strconv.Atoi(string(b))
	if err != nil || pid <= 0 {
		return true
	}
	err = syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// release gives the port back.
func (l *portLease) release() { os.Remove(l.path) }

func releaseAll(leases []*portLease) {
	for _, l := range leases {
		l.release()
	}
}
