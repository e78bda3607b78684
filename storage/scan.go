package storage

import (
	"errors"
	"io"

	"github.com/strait-io/strait/storage/record"
)

// ForEachBatch is forEachBatch for other packages (a drill clone's leader
// looks past the clone point for its reset): reads do not take the log's
// lock, and a truncation racing it ends it with an error.
func (l *Log) ForEachBatch(from, to int64, fn func(b record.Batch) error) error {
	return l.forEachBatch(from, to, fn)
}

// forEachBatch calls fn for every batch holding an offset in [from, to), in
// offset order, reading each whole batch into a reused buffer. The batch is
// only valid during the call.
func (l *Log) forEachBatch(from, to int64, fn func(b record.Batch) error) error {
	segs := l.segs()
	i := max(floorSegment(segs, from), 0)
	var (
		hdr [record.HeaderSize]byte
		buf []byte
	)
	for ; i < len(segs); i++ {
		s := segs[i]
		if s.baseOffset >= to {
			return nil
		}
		size := s.Size()
		pos, _, found, err := s.translateOffset(from, size, hdr[:])
		if err != nil {
			return err
		}
		if !found {
			continue
		}
		for pos+record.LogOverhead <= size {
			h, err := s.batchHeaderAt(pos, hdr[:])
			if err != nil {
				return err
			}
			n := int64(h.Size())
			if h.BaseOffset() >= to {
				return nil
			}
			if pos+n > size {
				return io.ErrUnexpectedEOF
			}
			if int64(cap(buf)) < n {
				buf = make([]byte, n)
			}
			b := buf[:n]
			if got, err := s.f().ReadAt(b, pos); int64(got) < n {
				if err == nil || errors.Is(err, io.EOF) {
					err = io.ErrUnexpectedEOF
				}
				return err
			}
			if err := fn(record.Batch(b)); err != nil {
				return err
			}
			pos += n
		}
	}
	return nil
}
