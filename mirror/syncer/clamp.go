package syncer

// syncedOffset is the offset a group's commit on the source becomes on the
// destination (digest §6, VK12 / msg157035):
// max(destLogStart, min(sourceCommitted, destEnd)). Offsets need no
// translation, since a mirror partition holds the source's records at the
// source's offsets; the clamp keeps the commit inside the destination's
// log, so a consumer resuming there neither skips what the destination has
// not mirrored yet (it reads it once it arrives) nor asks for offsets
// deleted by retention.
//
// The leader epoch is the source commit's when the offset is kept, -1
// when it was clamped: the epoch belongs to the record at the source's
// offset, not to the one the destination commit points at.
func syncedOffset(sourceCommitted int64, sourceEpoch int32, destLogStart, destEnd int64) (int64, int32) {
	off := max(destLogStart, min(sourceCommitted, destEnd))
	if off != sourceCommitted {
		return off, -1
	}
	return off, sourceEpoch
}
