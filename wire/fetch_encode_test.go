package wire

import (
	"bytes"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/vfs"
)

// randomFetch builds a random Fetch response at version whose record
// data is partly in file (its content is data), partly in memory.
func randomFetch(rng *rand.Rand, version int16, file vfs.File, data []byte) *fetchResponse {
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = version
	resp.ThrottleMillis = rng.Int32N(100)
	resp.ErrorCode = int16(rng.IntN(3))
	resp.SessionID = rng.Int32()
	var slices [][]storage.FileSlice
	for ti := 0; ti < rng.IntN(4); ti++ {
		rt := kmsg.NewFetchResponseTopic()
		rt.Topic = string(rune('a'+ti)) + "-topic"
		for k := range rt.TopicID {
			rt.TopicID[k] = byte(rng.Uint32())
		}
		var row []storage.FileSlice
		for pi := 0; pi < rng.IntN(5); pi++ {
			p := kmsg.NewFetchResponseTopicPartition()
			p.Partition, p.HighWatermark, p.LastStableOffset, p.LogStartOffset = int32(pi), rng.Int64(), rng.Int64(), rng.Int64()
			p.PreferredReadReplica = -1
			if rng.IntN(3) == 0 {
				p.AbortedTransactions = []kmsg.FetchResponseTopicPartitionAbortedTransaction{{ProducerID: 1, FirstOffset: 2}, {ProducerID: 3, FirstOffset: 4}}
			}
			if rng.IntN(4) == 0 {
				p.DivergingEpoch.Epoch, p.DivergingEpoch.EndOffset = 5, 99
			}
			if rng.IntN(4) == 0 {
				p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = 2, 7
			}
			var sl storage.FileSlice
			switch rng.IntN(4) {
			case 0: // data in the file (sizes around the varint boundaries)
				size := []int{1, 126, 127, 128, 16383, 16384, 70000}[rng.IntN(7)]
				sl = storage.FileSlice{File: file, Position: int64(rng.IntN(len(data) - size)), Size: int32(size)}
				p.RecordBatches = []byte{}
			case 1: // in memory
				p.RecordBatches = []byte("in-memory batch")
			case 2: // empty
				p.RecordBatches = []byte{}
			default: // null
			}
			row = append(row, sl)
			rt.Partitions = append(rt.Partitions, p)
		}
		slices = append(slices, row)
		resp.Topics = append(resp.Topics, rt)
	}
	if version >= 16 && rng.IntN(2) == 0 {
		resp.Brokers = []kmsg.FetchResponseBroker{{NodeID: 1, Host: "h", Port: 9092, Rack: kmsg.StringPtr("r")}, {NodeID: 2, Host: "hh", Port: 1}}
	}
	return &fetchResponse{FetchResponse: resp, slices: slices}
}

func randomSegment(t *testing.T, fs vfs.FS, name string, rng *rand.Rand) (vfs.File, []byte) {
	t.Helper()
	f, err := fs.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	return f, data
}

// TestFetchEncodingMatchesKmsg builds random Fetch responses, some record
// data in files and some in memory, and checks that the fetch encoder's
// bytes equal kmsg's encoding of the same response at every version.
func TestFetchEncodingMatchesKmsg(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	f, data := randomSegment(t, vfs.NewMem(), "/seg", rng)
	pool := &bufferPool{scribble: true}
	for version := int16(4); version <= 17; version++ {
		for iter := 0; iter < 60; iter++ {
			fr := randomFetch(rng, version, f, data)
			got, err := fr.encodeFramed(42, pool)
			if err != nil {
				t.Fatal(err)
			}
			ref := &fetchResponse{FetchResponse: cloneFetch(fr.FetchResponse), slices: fr.slices}
			ref.fillRecords()
			want := encodeResponse(nil, 42, ref.FetchResponse)
			if !bytes.Equal(got, want) {
				t.Fatalf("v%d iteration %d: fetch encoder differs from kmsg (%d vs %d bytes)", version, iter, len(got), len(want))
			}
			pool.put(got)
		}
	}
	if n := pool.outstanding(); n != 0 {
		t.Fatalf("%d buffers not given back", n)
	}
}

// The sendfile layout (header runs with file data cut in) is, once the
// file data is put in place, the same frame the pooled encoder writes.
func TestFetchDirectLayoutMatchesPooled(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	f, data := randomSegment(t, vfs.OS{}, filepath.Join(t.TempDir(), "seg"), rng)
	pool := &bufferPool{scribble: true}
	direct := 0
	for version := int16(4); version <= 17; version++ {
		for iter := 0; iter < 60; iter++ {
			fr := randomFetch(rng, version, f, data)
			want, err := fr.encodeFramed(42, pool)
			if err != nil {
				t.Fatal(err)
			}
			d := fr.encodeDirect(42, pool, 0)
			fileBytes := 0
			for i := range fr.Topics {
				for j := range fr.Topics[i].Partitions {
					if n, fromFile := fr.recordsLen(i, j); fromFile {
						fileBytes += n
					}
				}
			}
			if d == nil {
				if fileBytes != 0 {
					t.Fatalf("v%d iteration %d: no sendfile layout for %d bytes of OS file data", version, iter, fileBytes)
				}
				pool.put(want)
				continue
			}
			direct++
			var got []byte
			for k, c := range d.cuts {
				got = append(got, d.part(k)...)
				got = append(got, data[c.pos:c.pos+c.n]...)
			}
			got = append(got, d.part(len(d.cuts))...)
			if len(got) != d.size || !bytes.Equal(got, want) {
				t.Fatalf("v%d iteration %d: sendfile layout differs from the pooled frame (%d/%d vs %d bytes)", version, iter, len(got), d.size, len(want))
			}
			if d := fr.encodeDirect(42, pool, fileBytes+1); d != nil {
				t.Fatalf("v%d iteration %d: layout below the sendfile minimum", version, iter)
			}
			pool.put(want)
			pool.put(d.hdr)
		}
	}
	if direct < 100 {
		t.Fatalf("only %d responses had a sendfile layout", direct)
	}
	if n := pool.outstanding(); n != 0 {
		t.Fatalf("%d buffers not given back", n)
	}
	// Files without a descriptor (the in-memory FS) never get one.
	mem, memData := randomSegment(t, vfs.NewMem(), "/seg", rng)
	for range 50 {
		if d := randomFetch(rng, 12, mem, memData).encodeDirect(1, pool, 0); d != nil {
			t.Fatal("sendfile layout for an in-memory file")
		}
	}
}

func cloneFetch(r *kmsg.FetchResponse) *kmsg.FetchResponse {
	c := *r
	c.Topics = append([]kmsg.FetchResponseTopic(nil), r.Topics...)
	for i := range c.Topics {
		c.Topics[i].Partitions = append([]kmsg.FetchResponseTopicPartition(nil), r.Topics[i].Partitions...)
	}
	return &c
}

// A slice that reads short (its segment was truncated) is sent as far as it
// read, with a length prefix that says so.
func TestFetchEncodingShortRead(t *testing.T) {
	fs := vfs.NewMem()
	f, _ := fs.Create("/seg")
	f.WriteAt([]byte("0123456789"), 0)
	for _, version := range []int16{11, 12} {
		resp := kmsg.NewPtrFetchResponse()
		resp.Version = version
		rt := kmsg.NewFetchResponseTopic()
		p := kmsg.NewFetchResponseTopicPartition()
		p.RecordBatches = []byte{}
		rt.Partitions = append(rt.Partitions, p)
		resp.Topics = append(resp.Topics, rt)
		fr := &fetchResponse{FetchResponse: resp, slices: [][]storage.FileSlice{{{File: f, Position: 4, Size: 100}}}}
		got, err := fr.encodeFramed(1, nil)
		if err != nil {
			t.Fatal(err)
		}
		back := kmsg.NewPtrFetchResponse()
		back.Version = version
		hdr := 8
		if version >= 12 {
			hdr = 9
		}
		if err := back.ReadFrom(got[hdr:]); err != nil {
			t.Fatalf("v%d: %v", version, err)
		}
		if string(back.Topics[0].Partitions[0].RecordBatches) != "456789" {
			t.Fatalf("v%d: records %q", version, back.Topics[0].Partitions[0].RecordBatches)
		}
	}
}
