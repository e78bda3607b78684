//go:build !linux

package wire

import "testing"

// dropPageCache is Linux only (posix_fadvise); elsewhere reads stay warm.
func dropPageCache(*testing.T, *filePartition) {}
