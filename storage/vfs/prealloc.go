package vfs

// Preallocator is implemented by files whose filesystem can reserve
// blocks past the file's end without changing its size (fallocate(2) with
// FALLOC_FL_KEEP_SIZE), and give them back. The size, and so everything a
// reader or recovery sees, is unchanged by either; only where later writes
// land on disk is.
type Preallocator interface {
	// Preallocate reserves n bytes of blocks from off.
	Preallocate(off, n int64) error
	// ReleasePreallocated gives back the blocks reserved past size, which
	// must be the file's size: a truncation to the size it has (ext4 and
	// XFS free blocks preallocated past the end then; a hole punched
	// there is clamped to the size and frees nothing).
	ReleasePreallocated(size int64) error
}
