package sim

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/replication/fetcher"
	"github.com/strait-io/strait/storage"
)

// requestTimeoutSteps is how long a driver waits for an answer before it
// gives up on the request (replica.socket.timeout.ms).
const requestTimeoutSteps = 6

var errTimeout = errors.New("sim: request timed out")

// driver runs one fetcher's loop (Kafka's doWork) with each request
// carried by the network: a truncation round, then a fetch, then the
// offset resets it asked for, one request outstanding at a time.
type driver struct {
	n           *node
	incarnation int
	f           *fetcher.Fetcher
	ep          *fetcher.KafkaEndPoint
	busy        bool
	stage       int
	resets      []fetcher.OffsetReset
}

const (
	stageTruncate = iota
	stageFetch
	stageReset
)

// live reports whether the driver's node and fetcher still exist.
func (d *driver) live() bool {
	return d.n.up && d.n.incarnation == d.incarnation && d.n.drivers[d.f] == d
}

// step starts the driver's next request, if it is not waiting for one.
func (d *driver) step() {
	if d.busy || !d.live() {
		return
	}
	switch d.stage {
	case stageTruncate:
		d.stage = stageFetch
		if req := d.f.PollTruncation(); req != nil {
			d.send(d.ep.BuildEpochRequest(req.Partitions), "OffsetForLeaderEpoch", func(resp kmsg.Response, err error) {
				var answers map[storage.TopicPartition]fetcher.EpochEndOffset
				if err == nil {
					answers = fetcher.DecodeEpochResponse(resp.(*kmsg.OffsetForLeaderEpochResponse))
				}
				d.f.CompleteTruncation(req, answers, err)
			})
			return
		}
		fallthrough
	case stageFetch:
		d.stage = stageTruncate
		req := d.f.PollFetch()
		if req == nil {
			return
		}
		d.send(req.Request, fmt.Sprintf("Fetch@%d", req.Request.Topics[0].Partitions[0].FetchOffset), func(resp kmsg.Response, err error) {
			var data map[storage.TopicPartition]*fetcher.FetchData
			if err == nil {
				data, err = fetcher.DecodeFetch(req, resp.(*kmsg.FetchResponse))
			}
			if d.resets = d.f.CompleteFetch(req, data, err); len(d.resets) > 0 {
				d.stage = stageReset
			}
		})
	case stageReset:
		r := d.resets[0]
		d.resets = d.resets[1:]
		if len(d.resets) == 0 {
			d.stage = stageTruncate
		}
		d.send(d.ep.BuildListOffsets(r.TP, r.CurrentLeaderEpoch, storage.LatestTimestamp), "ListOffsets(latest)", func(resp kmsg.Response, err error) {
			if err != nil {
				d.f.CompleteOffsetReset(r, fetcher.OffsetAndEpoch{}, fetcher.OffsetAndEpoch{}, err)
				return
			}
			end, err := fetcher.DecodeListOffsets(r.TP, resp.(*kmsg.ListOffsetsResponse))
			if err != nil {
				d.f.CompleteOffsetReset(r, fetcher.OffsetAndEpoch{}, fetcher.OffsetAndEpoch{}, err)
				return
			}
			// The second request goes out right away, as in DoWork.
			d.busy = true
			d.send(d.ep.BuildListOffsets(r.TP, r.CurrentLeaderEpoch, storage.EarliestTimestamp), "ListOffsets(earliest)", func(resp kmsg.Response, err error) {
				var start fetcher.OffsetAndEpoch
				if err == nil {
					start, err = fetcher.DecodeListOffsets(r.TP, resp.(*kmsg.ListOffsetsResponse))
				}
				d.f.CompleteOffsetReset(r, start, end, err)
			})
		})
	}
}

// send carries a request to the leader and its answer back; whichever of
// the answer and the timeout comes first completes it.
func (d *driver) send(req kmsg.Request, what string, done func(kmsg.Response, error)) {
	c := d.n.c
	d.busy = true
	from, to := d.n.id, d.ep.Leader.ID
	finished := false
	complete := func(resp kmsg.Response, err error) {
		if finished {
			return
		}
		finished = true
		if !d.live() {
			return
		}
		d.busy = false
		done(resp, err)
		if p, ok := d.n.partition(); ok {
			c.tracef("node %d: %s done (err %v): LEO %d HW %d", d.n.id, what, err, p.Log().LogEndOffset(), p.HighWatermark())
		}
	}
	c.net.after(requestTimeoutSteps, fmt.Sprintf("timeout %d->%d %s", from, to, what), func() { complete(nil, errTimeout) })
	leader := c.node(to)
	leaderInc := leader.incarnation
	c.net.send(from, to, what, func() {
		if !leader.up || leader.incarnation != leaderInc {
			return // the connection died with the leader
		}
		resp := leader.serve(req)
		c.net.send(to, from, what+" answer", func() { complete(resp, nil) })
	})
}

// serve answers a replica request with the node's replica manager, as
// the wire layer would.
func (n *node) serve(req kmsg.Request) kmsg.Response {
	ctx := context.Background()
	switch r := req.(type) {
	case *kmsg.FetchRequest:
		res := n.rm.Fetch(ctx, r)
		// The records stay in the segment files until the response is
		// written; copy them out now, as the encoder would.
		for i := range res.Resp.Topics {
			for j := range res.Resp.Topics[i].Partitions {
				s := res.Slices[i][j]
				buf := make([]byte, s.Size)
				if err := s.ReadInto(buf); err != nil {
					// A slice cut short by a truncation sends what was
					// read; the follower drops the partial batch.
					buf = nil
				}
				res.Resp.Topics[i].Partitions[j].RecordBatches = buf
			}
		}
		return res.Resp
	case *kmsg.OffsetForLeaderEpochRequest:
		return n.rm.OffsetForLeaderEpoch(ctx, r)
	case *kmsg.ListOffsetsRequest:
		return n.rm.ListOffsets(ctx, r)
	}
	panic(fmt.Sprintf("sim: unexpected request %T", req))
}
