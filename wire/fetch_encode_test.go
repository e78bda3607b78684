package wire

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/vfs"
)

// TestFetchEncodingMatchesKmsg builds random Fetch responses, some record
// data in files and some in memory, and checks that the fetch encoder's
// bytes equal kmsg's encoding of the same response at every version.
func TestFetchEncodingMatchesKmsg(t *testing.T) {
	fs := vfs.NewMem()
	f, err := fs.Create("/seg")
	if err != nil {
		t.Fatal(err)
	}
	file := make([]byte, 1<<20)
	rng := rand.New(rand.NewPCG(7, 9))
	for i := range file {
		file[i] = byte(rng.Uint32())
	}
	f.WriteAt(file, 0)
	for version := int16(4); version <= 17; version++ {
		for iter := 0; iter < 60; iter++ {
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
						sl = storage.FileSlice{File: f, Position: int64(rng.IntN(len(file) - size)), Size: int32(size)}
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

			fr := &fetchResponse{FetchResponse: resp, slices: slices}
			got, err := fr.encodeFramed(42)
			if err != nil {
				t.Fatal(err)
			}
			ref := &fetchResponse{FetchResponse: cloneFetch(resp), slices: slices}
			ref.fillRecords()
			want := encodeResponse(42, ref.FetchResponse)
			if !bytes.Equal(got, want) {
				t.Fatalf("v%d iteration %d: fetch encoder differs from kmsg (%d vs %d bytes)", version, iter, len(got), len(want))
			}
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
		got, err := fr.encodeFramed(1)
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
