package index

import (
	"fmt"
	"math"
)

// relativeOffset stores offset as the 4-byte offset-from-base both the
// offset and the time index use (Kafka's AbstractIndex.relativeOffset).
func relativeOffset(baseOffset, offset int64, path string) (int32, error) {
	if offset < baseOffset || offset-baseOffset > math.MaxInt32 {
		return 0, fmt.Errorf("%w: offset %d with base offset %d (%s)", ErrOffsetOverflow, offset, baseOffset, path)
	}
	return int32(offset - baseOffset), nil
}

// maxEntriesFor is Kafka's maxEntries = maxIndexSize / entrySize.
func maxEntriesFor(maxIndexSize, entrySize int) (int, error) {
	if maxIndexSize < entrySize {
		return 0, fmt.Errorf("%w: %d < %d", ErrInvalidMaxIndexSize, maxIndexSize, entrySize)
	}
	return maxIndexSize / entrySize, nil
}
