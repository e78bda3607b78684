// Package mirrorit holds the integration tests of cluster mirroring
// (KIP-1279): a source and a destination cluster in one process (one or
// three Strait nodes each, or franz-go's kfake as the source), a mirror
// created on the destination with the Go admin client, and checks that the
// destination's mirror partitions are byte-identical to the source's.
//
// This file is the part of the harness that does not need a running
// cluster: reading a partition's batches out of raw Fetch responses and
// comparing two partitions batch by batch. Everything else is in the
// package's tests.
package mirrorit

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/strait-io/strait/storage/record"
)

// maxExamples bounds the examples a Report keeps of each kind of problem.
const maxExamples = 10

// Report counts what an identity check compared and what differed. A
// mirror is correct when Mismatches, Missing and Extra are 0 and Batches is
// the number of batches the source holds.
type Report struct {
	Topic string
	// Partitions compared (the source's partition count).
	Partitions int
	// SourcePartitions and DestinationPartitions are the partition counts
	// Metadata reports on each side.
	SourcePartitions, DestinationPartitions int
	// SameTopicID: both clusters name the topic with the same id (the
	// mirror creates the destination topic with the source's id).
	SameTopicID bool
	// Batches is the number of source batches found on the destination at
	// the same base offset (identical or not).
	Batches int
	// Records and Bytes are the records and bytes of the source batches
	// compared.
	Records, Bytes int64
	// Mismatches counts batches present on both sides at the same base
	// offset that differ in length, CRC, partition leader epoch or any
	// byte.
	Mismatches int
	// Missing counts source batches the destination does not have.
	Missing int
	// Extra counts destination batches the source does not have.
	Extra int
	// Examples describes up to maxExamples problems of each kind.
	Examples []string

	kinds map[string]int
}

func (r *Report) String() string {
	return fmt.Sprintf("%s: partitions=%d (source %d, destination %d) same-topic-id=%v batches=%d records=%d bytes=%d mismatches=%d missing=%d extra=%d",
		r.Topic, r.Partitions, r.SourcePartitions, r.DestinationPartitions, r.SameTopicID, r.Batches, r.Records, r.Bytes,
		r.Mismatches, r.Missing, r.Extra)
}

// OK reports whether the two sides are identical: same topic id and
// partition count, every source batch present and equal, nothing extra,
// and at least one batch compared.
func (r *Report) OK() bool {
	return r.SameTopicID && r.SourcePartitions == r.DestinationPartitions && r.Batches > 0 &&
		r.Mismatches == 0 && r.Missing == 0 && r.Extra == 0
}

func (r *Report) note(kind, format string, args ...any) {
	if r.kinds == nil {
		r.kinds = map[string]int{}
	}
	if r.kinds[kind]++; r.kinds[kind] <= maxExamples {
		r.Examples = append(r.Examples, kind+": "+fmt.Sprintf(format, args...))
	}
}

// ComparePartition compares one partition's batches, source and
// destination, each in log order, by base offset, and adds the result to
// r. Bytes are compared whole: base offset, length, partition leader
// epoch, magic, CRC, attributes, producer id/epoch/sequence, timestamps
// and records, which is what "the follower append path copies byte for
// byte" promises.
func (r *Report) ComparePartition(partition int32, src, dst []record.Batch) {
	i, j := 0, 0
	for i < len(src) || j < len(dst) {
		switch {
		case j >= len(dst) || (i < len(src) && src[i].BaseOffset() < dst[j].BaseOffset()):
			r.Missing++
			r.note("missing", "p%d: source batch at offset %d (%d records) not on the destination", partition, src[i].BaseOffset(), src[i].RecordCount())
			i++
		case i >= len(src) || dst[j].BaseOffset() < src[i].BaseOffset():
			r.Extra++
			r.note("extra", "p%d: destination batch at offset %d (%d records) not on the source", partition, dst[j].BaseOffset(), dst[j].RecordCount())
			j++
		default:
			s, d := src[i], dst[j]
			r.Batches++
			r.Records += int64(s.RecordCount())
			r.Bytes += int64(len(s))
			if why := batchDiff(s, d); why != "" {
				r.Mismatches++
				r.note("mismatch", "p%d offset %d: %s", partition, s.BaseOffset(), why)
			}
			i++
			j++
		}
	}
}

// batchDiff says how two batches at the same base offset differ, or "".
func batchDiff(s, d record.Batch) string {
	switch {
	case s.BatchLength() != d.BatchLength():
		return fmt.Sprintf("length %d, destination %d", s.BatchLength(), d.BatchLength())
	case s.CRC() != d.CRC():
		return fmt.Sprintf("CRC %08x, destination %08x", s.CRC(), d.CRC())
	case s.PartitionLeaderEpoch() != d.PartitionLeaderEpoch():
		return fmt.Sprintf("partition leader epoch %d, destination %d", s.PartitionLeaderEpoch(), d.PartitionLeaderEpoch())
	case !bytes.Equal(s, d):
		at := 0
		for at < len(s) && s[at] == d[at] {
			at++
		}
		return fmt.Sprintf("bytes differ from byte %d of %d", at, len(s))
	}
	return ""
}

// AppendBatches appends to dst the whole batches of buf (the records of
// one partition in a Fetch response) that end after from, copying them,
// and returns the offset after the last one. A batch cut by the response's
// size limit ends the walk without error: the next fetch starts at it.
// Anything that is not a whole valid v2 batch (bad length or magic, a CRC
// that does not match) is an error: a cluster under test must never serve
// it.
func AppendBatches(dst []record.Batch, buf []byte, from int64) ([]record.Batch, int64, error) {
	next := from
	for pos := 0; pos < len(buf); {
		b, err := record.ReadBatch(buf[pos:])
		if errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return dst, next, fmt.Errorf("batch at byte %d of the fetch response (fetch offset %d): %w", pos, from, err)
		}
		pos += len(b)
		if b.NextOffset() <= next {
			continue // the start of the batch holding from, already read
		}
		if !b.ValidCRC() {
			return dst, next, fmt.Errorf("batch at offset %d: CRC %08x, computed %08x", b.BaseOffset(), b.CRC(), b.ComputeCRC())
		}
		dst = append(dst, record.Batch(bytes.Clone(b)))
		next = b.NextOffset()
	}
	return dst, next, nil
}
