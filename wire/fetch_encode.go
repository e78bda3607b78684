package wire

import (
	"encoding/binary"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage"
)

// fetchResponse is a Fetch answer whose record data is still in segment
// files. encodeResponse frames it with encodeFetch, which writes every
// field itself so the data goes from the file straight into the one
// response buffer: no intermediate copy, no buffer regrowth. kmsg's
// encoding of the same response (records read into RecordBatches) is the
// reference; TestFetchEncodingMatchesKmsg holds the two byte-equal for
// every version.
type fetchResponse struct {
	*kmsg.FetchResponse
	slices [][]storage.FileSlice
}

func appendI16(b []byte, v int16) []byte { return binary.BigEndian.AppendUint16(b, uint16(v)) }
func appendI32(b []byte, v int32) []byte { return binary.BigEndian.AppendUint32(b, uint32(v)) }
func appendI64(b []byte, v int64) []byte { return binary.BigEndian.AppendUint64(b, uint64(v)) }

func appendArrayLen(b []byte, n int, flexible bool) []byte {
	if flexible {
		return binary.AppendUvarint(b, uint64(n)+1)
	}
	return appendI32(b, int32(n))
}

func appendNullableArrayLen(b []byte, n int, null, flexible bool) []byte {
	if null {
		if flexible {
			return append(b, 0)
		}
		return appendI32(b, -1)
	}
	return appendArrayLen(b, n, flexible)
}

func appendStr(b []byte, s string, flexible bool) []byte {
	if flexible {
		b = binary.AppendUvarint(b, uint64(len(s))+1)
	} else {
		b = appendI16(b, int16(len(s)))
	}
	return append(b, s...)
}

func appendNullableStr(b []byte, s *string, flexible bool) []byte {
	if s == nil {
		if flexible {
			return append(b, 0)
		}
		return appendI16(b, -1)
	}
	return appendStr(b, *s, flexible)
}

// appendTagged appends one tagged field: tag, size, then what fn appends.
func appendTagged(b []byte, tag uint64, fn func([]byte) []byte) []byte {
	b = binary.AppendUvarint(b, tag)
	body := fn(nil)
	b = binary.AppendUvarint(b, uint64(len(body)))
	return append(b, body...)
}

// hasUnknownTags reports whether any part of r carries tagged fields this
// encoder does not write; such a response falls back to kmsg.
func hasUnknownTags(r *kmsg.FetchResponse) bool {
	if r.UnknownTags.Len() > 0 {
		return true
	}
	for i := range r.Topics {
		t := &r.Topics[i]
		if t.UnknownTags.Len() > 0 {
			return true
		}
		for j := range t.Partitions {
			p := &t.Partitions[j]
			if p.UnknownTags.Len() > 0 || p.DivergingEpoch.UnknownTags.Len() > 0 ||
				p.CurrentLeader.UnknownTags.Len() > 0 || p.SnapshotID.UnknownTags.Len() > 0 {
				return true
			}
			for k := range p.AbortedTransactions {
				if p.AbortedTransactions[k].UnknownTags.Len() > 0 {
					return true
				}
			}
		}
	}
	for i := range r.Brokers {
		if r.Brokers[i].UnknownTags.Len() > 0 {
			return true
		}
	}
	return false
}

// recordsLen is the size of partition (i, j)'s record data: its file slice
// when it has one, else its RecordBatches.
func (f *fetchResponse) recordsLen(i, j int) (int, bool) {
	if i < len(f.slices) && j < len(f.slices[i]) {
		if sl := f.slices[i][j]; sl.File != nil && sl.Size > 0 {
			return int(sl.Size), true
		}
	}
	return len(f.Topics[i].Partitions[j].RecordBatches), false
}

// sizes estimates the encoded response: meta bounds every byte that is not
// record data (generously: 96 bytes a partition covers its fixed fields
// and tags), data is the record data in files and in memory.
func (f *fetchResponse) sizes() (meta, data int) {
	r := f.FetchResponse
	meta = 64
	for i := range r.Topics {
		meta += 64 + len(r.Topics[i].Topic)
		for j := range r.Topics[i].Partitions {
			n, _ := f.recordsLen(i, j)
			data += n
			meta += 96 + 24*len(r.Topics[i].Partitions[j].AbortedTransactions)
		}
	}
	for i := range r.Brokers {
		meta += 32 + len(r.Brokers[i].Host)
	}
	return meta, data
}

// encodeFramed writes the size prefix, the response header and the body
// into one buffer from pool (nil: a fresh one), reading each record slice
// directly into its place. A slice that reads short (the segment was
// truncated meanwhile) is sent as far as it was read, with its length
// prefix corrected: a trailing partial batch is what clients already
// handle.
func (f *fetchResponse) encodeFramed(corr int32, pool *bufferPool) ([]byte, error) {
	if hasUnknownTags(f.FetchResponse) {
		return nil, fmt.Errorf("fetch response with unknown tagged fields")
	}
	meta, data := f.sizes()
	var b []byte
	if pool != nil {
		b = pool.get(meta + data)
	} else {
		b = make([]byte, 0, meta+data)
	}
	b = f.appendFramed(b, corr, f.appendRecords)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b, nil
}

// appendFramed appends the whole frame, its size prefix left zero, with
// records writing each partition's records field.
func (f *fetchResponse) appendFramed(b []byte, corr int32, records func(b []byte, i, j int, flexible bool) []byte) []byte {
	r := f.FetchResponse
	version := r.Version
	flexible := version >= 12
	b = append(b, 0, 0, 0, 0)
	b = appendI32(b, corr)
	if flexible {
		b = append(b, 0) // response header v1: no tagged fields
	}
	if version >= 1 {
		b = appendI32(b, r.ThrottleMillis)
	}
	if version >= 7 {
		b = appendI16(b, r.ErrorCode)
		b = appendI32(b, r.SessionID)
	}
	b = appendArrayLen(b, len(r.Topics), flexible)
	for i := range r.Topics {
		t := &r.Topics[i]
		if version <= 12 {
			b = appendStr(b, t.Topic, flexible)
		}
		if version >= 13 {
			b = append(b, t.TopicID[:]...)
		}
		b = appendArrayLen(b, len(t.Partitions), flexible)
		for j := range t.Partitions {
			p := &t.Partitions[j]
			b = appendI32(b, p.Partition)
			b = appendI16(b, p.ErrorCode)
			b = appendI64(b, p.HighWatermark)
			if version >= 4 {
				b = appendI64(b, p.LastStableOffset)
			}
			if version >= 5 {
				b = appendI64(b, p.LogStartOffset)
			}
			if version >= 4 {
				b = appendNullableArrayLen(b, len(p.AbortedTransactions), p.AbortedTransactions == nil, flexible)
				for _, a := range p.AbortedTransactions {
					b = appendI64(b, a.ProducerID)
					b = appendI64(b, a.FirstOffset)
					if flexible {
						b = append(b, 0)
					}
				}
			}
			if version >= 11 {
				b = appendI32(b, p.PreferredReadReplica)
			}
			b = records(b, i, j, flexible)
			if flexible {
				b = appendPartitionTags(b, p)
			}
		}
		if flexible {
			b = append(b, 0)
		}
	}
	if flexible {
		if len(r.Brokers) > 0 {
			b = append(b, 1)
			b = appendTagged(b, 0, func(d []byte) []byte {
				d = appendArrayLen(d, len(r.Brokers), true)
				for _, br := range r.Brokers {
					d = appendI32(d, br.NodeID)
					d = appendStr(d, br.Host, true)
					d = appendI32(d, br.Port)
					d = appendNullableStr(d, br.Rack, true)
					d = append(d, 0)
				}
				return d
			})
		} else {
			b = append(b, 0)
		}
	}
	return b
}

// appendRecordsPrefix writes the length of a records field holding n bytes.
func appendRecordsPrefix(b []byte, n int, flexible bool) []byte {
	if flexible {
		return binary.AppendUvarint(b, uint64(n)+1)
	}
	return appendI32(b, int32(n))
}

// appendMemRecords writes a records field whose data is in memory
// (RecordBatches; nil is a null field).
func appendMemRecords(b []byte, p *kmsg.FetchResponseTopicPartition, flexible bool) []byte {
	if p.RecordBatches == nil {
		if flexible {
			return append(b, 0)
		}
		return appendI32(b, -1)
	}
	b = appendRecordsPrefix(b, len(p.RecordBatches), flexible)
	return append(b, p.RecordBatches...)
}

// appendRecords writes partition (i, j)'s records field: the length prefix
// and the data, read from its file slice into b.
func (f *fetchResponse) appendRecords(b []byte, i, j int, flexible bool) []byte {
	p := &f.Topics[i].Partitions[j]
	n, fromFile := f.recordsLen(i, j)
	if !fromFile {
		return appendMemRecords(b, p, flexible)
	}
	sl := f.slices[i][j]
	// Read first, then write the prefix for what was actually read: in the
	// flexible encoding the prefix's own size depends on the length.
	prefixAt := len(b)
	var maxPrefix int
	if flexible {
		maxPrefix = binary.MaxVarintLen32
	} else {
		maxPrefix = 4
	}
	dataAt := prefixAt + maxPrefix
	if cap(b) < dataAt+n {
		grown := make([]byte, len(b), dataAt+n+1024)
		copy(grown, b)
		b = grown
	}
	data := b[dataAt : dataAt+n]
	got, _ := sl.File.ReadAt(data, sl.Position)
	var tmp [binary.MaxVarintLen32]byte
	prefix := appendRecordsPrefix(tmp[:0], got, flexible)
	// Move the data down next to the prefix when the prefix is shorter
	// than the room left for it (only ever a few bytes of move for the
	// flexible encoding, nothing for the fixed one).
	b = append(b[:prefixAt], prefix...)
	if shift := dataAt - len(b); shift > 0 {
		copy(b[len(b):len(b)+got], b[dataAt:dataAt+got])
	}
	return b[:len(b)+got]
}

// appendPartitionTags writes a partition's tagged fields: DivergingEpoch
// (0), CurrentLeader (1), SnapshotID (2), each when not at its default.
func appendPartitionTags(b []byte, p *kmsg.FetchResponseTopicPartition) []byte {
	var n byte
	div := p.DivergingEpoch.Epoch != -1 || p.DivergingEpoch.EndOffset != -1
	lead := p.CurrentLeader.LeaderID != -1 || p.CurrentLeader.LeaderEpoch != -1
	snap := p.SnapshotID.EndOffset != -1 || p.SnapshotID.Epoch != -1
	for _, set := range []bool{div, lead, snap} {
		if set {
			n++
		}
	}
	b = append(b, n)
	if div {
		b = appendTagged(b, 0, func(d []byte) []byte {
			d = appendI32(d, p.DivergingEpoch.Epoch)
			d = appendI64(d, p.DivergingEpoch.EndOffset)
			return append(d, 0)
		})
	}
	if lead {
		b = appendTagged(b, 1, func(d []byte) []byte {
			d = appendI32(d, p.CurrentLeader.LeaderID)
			d = appendI32(d, p.CurrentLeader.LeaderEpoch)
			return append(d, 0)
		})
	}
	if snap {
		b = appendTagged(b, 2, func(d []byte) []byte {
			d = appendI64(d, p.SnapshotID.EndOffset)
			d = appendI32(d, p.SnapshotID.Epoch)
			return append(d, 0)
		})
	}
	return b
}

// fillRecords reads every file slice into its partition's RecordBatches,
// for encoding with kmsg.
func (f *fetchResponse) fillRecords() {
	for i := range f.slices {
		for j, sl := range f.slices[i] {
			if sl.File == nil || sl.Size <= 0 {
				continue
			}
			buf := make([]byte, sl.Size)
			n, _ := sl.File.ReadAt(buf, sl.Position)
			f.Topics[i].Partitions[j].RecordBatches = buf[:n]
		}
	}
}
