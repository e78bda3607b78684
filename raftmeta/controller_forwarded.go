package raftmeta

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/ctrlrpc"
)

// A forwarded request (one carrying a ctrlrpc.ForwardID) is carried out at
// most once. Its broker retries it on NOT_CONTROLLER or a lost connection,
// and the first attempt may have committed before its answer was lost: a
// second DeleteMirror would then answer UNKNOWN_CLUSTER_MIRROR, a second
// CreateTopics TOPIC_ALREADY_EXISTS, for writes that did succeed. So the
// answer commits in the same batch as the write (ForwardedRequestRecord),
// and a retry, on this controller or one elected later, gets it back.
//
// The handlers build their answer after their write is applied, so the
// answer is not known when the batch is proposed. The controller runs the
// handler twice, holding the write slot throughout so both runs see the
// same image: first with writes collected and reported applied, which
// yields the records and the answer a success gives; then again on the
// same image with the collected records proposed together with that
// answer, which yields the answer to the write's real outcome (the first
// run's when it was applied: the second run may have drawn other random
// ids).

// forwardedRun is the state of a forwarded request's two runs.
type forwardedRun struct {
	img *Image
	// replay is set for the second run.
	replay bool
	// writes counts the handler's writes in this run; records are the
	// first one's.
	writes  int
	records []Record
	answer  *ForwardedRequestRecord
	// err is the outcome of the second run's write; pending is its
	// proposal while it may still be applied (the write slot is held
	// until it is).
	err     error
	pending <-chan error
	// refuse, when set, is what every write answers, without building.
	refuse error
}

type forwardedRunKey struct{}

// errManyWrites stops the first run of a handler that writes more than
// once: it is then run as an ordinary request (nothing was proposed).
var errManyWrites = errors.New("raftmeta: a forwarded request writing more than once is not deduplicated")

// serveForwarded answers a forwarded request once (see above): the answer
// the image holds for id, else the handler's, written with its records.
func (c *Controller) serveForwarded(ctx context.Context, id ctrlrpc.ForwardID, req kmsg.Request) (kmsg.Response, error) {
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return c.refuseForwarded(ctx, req, ctx.Err())
	}
	held := true
	release := func() {
		if held {
			held = false
			<-c.sem
		}
	}
	defer release()
	// Not leading, or not caught up: the request answers NOT_CONTROLLER or
	// times out as any other, its write refused with that error (an
	// ordinary write might still get through, without the request's id).
	err := ErrNotController
	if c.log.IsLeader() {
		if err = c.log.Sync(ctx); err == nil {
			err = c.writeBootstrap(ctx)
		}
	}
	if err != nil {
		release()
		return c.refuseForwarded(ctx, req, err)
	}
	img := c.log.Image()
	if a, ok := img.ForwardedAnswer(id); ok {
		resp, err := decodeForwardedAnswer(a, req)
		if err == nil {
			c.logger.Info("answered a retried forwarded request with its first answer", "request", kmsg.NameForKey(req.Key()), "node", id.Node, "seq", id.Seq)
			return resp, nil
		}
		c.logger.Warn("a forwarded request's stored answer does not fit its retry; carrying it out again", "node", id.Node, "seq", id.Seq, "err", err)
	}

	run := &forwardedRun{img: img}
	// A handler that writes more than once is served as an ordinary
	// request (below, without the id): none of the forwarded requests
	// does today.
	rctx := context.WithValue(ctx, forwardedRunKey{}, run)
	first, err := c.serveRequest(rctx, req)
	if err != nil {
		return nil, err
	}
	if run.writes > 1 {
		release()
		return c.serveRequest(ctx, req)
	}
	if len(run.records) == 0 {
		// Nothing to write (refused, or already so): a retry finds
		// the same.
		return first, nil
	}
	run.answer = &ForwardedRequestRecord{ID: id, APIKey: req.Key(), APIVersion: req.GetVersion(), Response: first.AppendTo(nil)}
	run.replay, run.writes = true, 0
	second, err := c.serveRequest(rctx, req)
	if run.pending != nil {
		// The batch may still be applied: hold the write slot until it
		// is, as write does.
		held = false
		go func(done <-chan error) { <-done; <-c.sem }(run.pending)
	}
	if err != nil {
		return nil, err
	}
	if run.err == nil && run.writes == 1 {
		return first, nil
	}
	return second, nil
}

// refuseForwarded answers req as its handler does when its write fails
// with err, without writing.
func (c *Controller) refuseForwarded(ctx context.Context, req kmsg.Request, err error) (kmsg.Response, error) {
	return c.serveRequest(context.WithValue(ctx, forwardedRunKey{}, &forwardedRun{refuse: err}), req)
}

// writeForwarded is write within a forwarded request's run (the caller
// holds the write slot): the first run collects the records, the second
// proposes them with the answer.
func (c *Controller) writeForwarded(ctx context.Context, run *forwardedRun, build func(img *Image) []Record) error {
	if run.refuse != nil {
		return run.refuse
	}
	run.writes++
	if run.writes > 1 {
		return errManyWrites
	}
	records := build(run.img)
	if !run.replay {
		run.records = records
		return nil
	}
	if len(records) == 0 || len(run.records) == 0 {
		// The handler wrote nothing this time: its answer stands.
		run.err = errManyWrites
		return nil
	}
	batch := append(append(make([]Record, 0, len(run.records)+1), run.records...), run.answer)
	done := c.log.Propose(batch)
	select {
	case err := <-done:
		if err != nil {
			c.logger.Warn("metadata write failed", "records", len(batch), "err", err)
		}
		run.err = err
		return err
	case <-ctx.Done():
		run.err, run.pending = ctx.Err(), done
		return ctx.Err()
	}
}

// decodeForwardedAnswer decodes the stored answer to req's first attempt.
func decodeForwardedAnswer(a *ForwardedAnswer, req kmsg.Request) (kmsg.Response, error) {
	if a.APIKey != req.Key() || a.APIVersion != req.GetVersion() {
		return nil, fmt.Errorf("answer to api %d v%d, retry is api %d v%d", a.APIKey, a.APIVersion, req.Key(), req.GetVersion())
	}
	resp := req.ResponseKind()
	resp.SetVersion(a.APIVersion)
	if err := resp.ReadFrom(a.Response); err != nil {
		return nil, err
	}
	return resp, nil
}
