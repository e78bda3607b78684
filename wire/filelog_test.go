package wire

import (
	"context"
	"math/rand/v2"
	"net"
	"path/filepath"
	"sort"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/vfs"
)

// fileTopic is a topic whose partitions are segment files on the OS
// filesystem (vfs.OS, so they offer descriptors for sendfile), each a run
// of v2 record batches as the storage engine lays them out. fileReplicas
// serves Fetch and ListOffsets from it as file slices, the way the
// replica manager does.
type fileTopic struct {
	name  string
	id    [16]byte
	parts []*filePartition
}

type filePartition struct {
	file    vfs.File
	data    []byte      // the file's content
	batches []fileBatch // in offset order
	values  [][]byte    // record values by offset
}

type fileBatch struct {
	base, next int64
	pos, size  int
}

// newFileTopic writes partitions segment files of about bytes each:
// batches of batchRecords records with random valueSize-byte values.
func newFileTopic(t testing.TB, name string, partitions, bytes, valueSize, batchRecords int) *fileTopic {
	t.Helper()
	var seed [32]byte
	copy(seed[:], name)
	rng := rand.NewChaCha8(seed)
	ft := &fileTopic{name: name}
	_, _ = rng.Read(ft.id[:])
	dir := t.TempDir()
	for pi := range partitions {
		p := &filePartition{}
		for len(p.data) < bytes {
			base := int64(len(p.values))
			recs := make([]record.Record, batchRecords)
			for i := range recs {
				v := make([]byte, valueSize)
				_, _ = rng.Read(v)
				recs[i] = record.Record{KeyLen: -1, ValueLen: int32(valueSize), Value: v}
				p.values = append(p.values, v)
			}
			b, err := record.Build(record.BatchSpec{
				BaseOffset: base, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1,
				BaseTimestamp: 1_700_000_000_000,
			}, recs, nil)
			if err != nil {
				t.Fatal(err)
			}
			p.batches = append(p.batches, fileBatch{base: base, next: int64(len(p.values)), pos: len(p.data), size: len(b)})
			p.data = append(p.data, b...)
		}
		f, err := vfs.OS{}.Create(filepath.Join(dir, name+"-"+strconv.Itoa(pi)+".log"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		if _, err := f.WriteAt(p.data, 0); err != nil {
			t.Fatal(err)
		}
		p.file = f
		ft.parts = append(ft.parts, p)
	}
	return ft
}

func (p *filePartition) end() int64 { return int64(len(p.values)) }

// read is Log.Read's shape: whole batches from the one holding offset,
// at most maxBytes of them, or the first whole batch if minOne.
func (p *filePartition) read(offset int64, maxBytes int, minOne bool) storage.FileSlice {
	i := sort.Search(len(p.batches), func(i int) bool { return p.batches[i].next > offset })
	if i == len(p.batches) {
		return storage.FileSlice{}
	}
	start, size := p.batches[i].pos, 0
	for ; i < len(p.batches); i++ {
		if size+p.batches[i].size > maxBytes {
			if size == 0 && minOne {
				size = p.batches[i].size
			}
			break
		}
		size += p.batches[i].size
	}
	return storage.FileSlice{File: p.file, Position: int64(start), Size: int32(size)}
}

// fileReplicas is a ReplicaService over a fileTopic; only Fetch and
// ListOffsets are served.
type fileReplicas struct {
	ReplicaService // nil: the other methods are not called
	topic          *fileTopic
	fetches        atomic.Int64
}

func (r *fileReplicas) partition(topic string, id [16]byte, partition int32) *filePartition {
	if (topic != r.topic.name && id != r.topic.id) || partition < 0 || int(partition) >= len(r.topic.parts) {
		return nil
	}
	return r.topic.parts[partition]
}

func (r *fileReplicas) Fetch(ctx context.Context, req *kmsg.FetchRequest) *FetchResult {
	r.fetches.Add(1)
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	res := &FetchResult{Resp: resp}
	budget, got := int(req.MaxBytes), 0
	for _, rt := range req.Topics {
		st := kmsg.NewFetchResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		var row []storage.FileSlice
		for _, rp := range rt.Partitions {
			sp := kmsg.NewFetchResponseTopicPartition()
			sp.Partition = rp.Partition
			var sl storage.FileSlice
			p := r.partition(rt.Topic, rt.TopicID, rp.Partition)
			switch {
			case p == nil:
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			case rp.FetchOffset < 0 || rp.FetchOffset > p.end():
				sp.ErrorCode = kerr.OffsetOutOfRange.Code
			default:
				sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = p.end(), p.end(), 0
				sl = p.read(rp.FetchOffset, min(int(rp.PartitionMaxBytes), budget), got == 0)
				budget -= int(sl.Size)
				got += int(sl.Size)
			}
			row = append(row, sl)
			st.Partitions = append(st.Partitions, sp)
		}
		res.Slices = append(res.Slices, row)
		resp.Topics = append(resp.Topics, st)
	}
	if got == 0 && req.MaxWaitMillis > 0 {
		// The long poll, short: nothing more will arrive.
		select {
		case <-time.After(min(time.Duration(req.MaxWaitMillis)*time.Millisecond, 50*time.Millisecond)):
		case <-ctx.Done():
		}
	}
	return res
}

func (r *fileReplicas) ListOffsets(_ context.Context, req *kmsg.ListOffsetsRequest) *kmsg.ListOffsetsResponse {
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	for _, rt := range req.Topics {
		st := kmsg.NewListOffsetsResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewListOffsetsResponseTopicPartition()
			sp.Partition, sp.Timestamp, sp.LeaderEpoch = rp.Partition, -1, 0
			p := r.partition(rt.Topic, [16]byte{}, rp.Partition)
			switch {
			case p == nil:
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			case rp.Timestamp == -1: // latest
				sp.Offset = p.end()
			default: // earliest, or any timestamp: everything is at one
				sp.Offset = 0
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

// topicMetadataStandIn answers Metadata with this broker as node 1 leading
// every partition of ft.
func topicMetadataStandIn(ft *fileTopic) api {
	return api{key: 3, min: 0, max: 12, handle: func(s *Server, _ context.Context, kreq kmsg.Request) (kmsg.Response, error) {
		req := kreq.(*kmsg.MetadataRequest)
		resp := req.ResponseKind().(*kmsg.MetadataResponse)
		host, portStr, err := net.SplitHostPort(s.plaintextAddr())
		if err != nil {
			return nil, err
		}
		port, _ := strconv.Atoi(portStr)
		b := kmsg.NewMetadataResponseBroker()
		b.NodeID, b.Host, b.Port = 1, host, int32(port)
		resp.Brokers = append(resp.Brokers, b)
		resp.ControllerID = 1
		names := []string{ft.name}
		if req.Topics != nil {
			names = names[:0]
			for _, rt := range req.Topics {
				if rt.Topic != nil {
					names = append(names, *rt.Topic)
				}
			}
		}
		for _, name := range names {
			mt := kmsg.NewMetadataResponseTopic()
			mt.Topic = kmsg.StringPtr(name)
			if name != ft.name {
				mt.ErrorCode = kerr.UnknownTopicOrPartition.Code
				resp.Topics = append(resp.Topics, mt)
				continue
			}
			mt.TopicID = ft.id
			for pi := range ft.parts {
				mp := kmsg.NewMetadataResponseTopicPartition()
				mp.Partition, mp.Leader, mp.LeaderEpoch = int32(pi), 1, 0
				mp.Replicas, mp.ISR = []int32{1}, []int32{1}
				mt.Partitions = append(mt.Partitions, mp)
			}
			resp.Topics = append(resp.Topics, mt)
		}
		return resp, nil
	}}
}

// newFileServer starts a test server whose Fetch, ListOffsets and
// Metadata serve ft.
func newFileServer(t *testing.T, cfg Config, ft *fileTopic, extra ...api) (*Server, *fileReplicas) {
	t.Helper()
	r := &fileReplicas{topic: ft}
	s := newTestServerSvc(t, cfg, Services{Replicas: r}, nil, append([]api{topicMetadataStandIn(ft)}, extra...)...)
	return s, r
}
