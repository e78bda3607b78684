package raftmeta

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// securityProtocols are Kafka's SecurityProtocol ids.
var securityProtocols = map[int16]string{0: "PLAINTEXT", 1: "SSL", 2: "SASL_PLAINTEXT", 3: "SASL_SSL"}

// SecurityProtocolID is the protocol id of a security protocol name, -1 if
// unknown.
func SecurityProtocolID(name string) int16 {
	for id, n := range securityProtocols {
		if n == name {
			return id
		}
	}
	return -1
}

// BrokerRegistration: v0-4 (ClusterControlManager.registerBroker).
//
// Behavior:
//   - A negative broker id, a zero incarnation id, an unknown security
//     protocol or a repeated listener name is INVALID_REGISTRATION; another
//     cluster's id is INCONSISTENT_CLUSTER_ID.
//   - The listener named ControllerListenerName is the broker's CONTROLLER
//     address: a broker that is not a voter is added to raft as a
//     non-voter there (before the record is written, so a failure leaves
//     nothing half done; without one it is INVALID_REGISTRATION); it is
//     left out of the advertised endpoints.
//   - The incarnation already registered amends the registration: same
//     epoch and fencing, a record only if the endpoints or rack changed.
//   - A new incarnation gets a new epoch (the offset of its
//     RegisterBrokerRecord) and starts fenced; it is unfenced by a
//     heartbeat once it has applied that offset. The previous incarnation
//     is taken out of every ISR and loses its leaderships in the same
//     batch, as if it had been fenced: its unflushed log may be gone.
//     Kafka instead refuses the new incarnation with
//     DUPLICATE_BROKER_REGISTRATION until the old session expires, which
//     makes a restart wait up to broker.session.timeout.ms.
func (c *clusterControl) BrokerRegistration(ctx context.Context, req *kmsg.BrokerRegistrationRequest) *kmsg.BrokerRegistrationResponse {
	resp := req.ResponseKind().(*kmsg.BrokerRegistrationResponse)
	fail := func(e *kerr.Error) *kmsg.BrokerRegistrationResponse {
		resp.ErrorCode = e.Code
		return resp
	}
	inc := Uuid(req.IncarnationID)
	if req.BrokerID < 0 || inc.IsZero() {
		return fail(kerr.InvalidRegistration)
	}
	var endpoints []Endpoint
	controllerAddr := ""
	seen := map[string]bool{}
	for _, l := range req.Listeners {
		proto, ok := securityProtocols[l.SecurityProtocol]
		if !ok || seen[l.Name] {
			return fail(kerr.InvalidRegistration)
		}
		seen[l.Name] = true
		if l.Name == c.cfg.ControllerListenerName {
			controllerAddr = net.JoinHostPort(l.Host, strconv.Itoa(int(l.Port)))
			continue
		}
		endpoints = append(endpoints, Endpoint{Listener: l.Name, SecurityProtocol: proto, Host: l.Host, Port: int32(l.Port)})
	}
	rack := ""
	if req.Rack != nil {
		rack = *req.Rack
	}
	var logDirs []Uuid
	for _, d := range req.LogDirs {
		logDirs = append(logDirs, Uuid(d))
	}
	if !c.log.IsLeader() {
		return fail(kerr.NotController)
	}
	if img := c.log.Image(); req.ClusterID != "" && img.ClusterID != "" && req.ClusterID != img.ClusterID {
		return fail(kerr.InconsistentClusterID)
	}
	if _, voter := c.cfg.Voters[req.BrokerID]; !voter && len(c.cfg.Voters) > 0 {
		if controllerAddr == "" {
			// It could never follow the metadata log.
			c.logger.Warn("refusing the registration of a non-voter without a CONTROLLER listener", "broker", req.BrokerID)
			return fail(kerr.InvalidRegistration)
		}
		if a, ok := c.log.(observerAdder); ok {
			if err := a.addObserver(ctx, req.BrokerID, controllerAddr); err != nil {
				c.logger.Warn("adding broker to the metadata quorum failed", "broker", req.BrokerID, "addr", controllerAddr, "err", err)
				code, _ := writeErrorCode(err)
				resp.ErrorCode = code
				return resp
			}
		}
	}
	err := c.write(ctx, func(img *Image) []Record {
		s := c.sessionsFor(img)
		cur, ok := img.Brokers[req.BrokerID]
		if ok && cur.IncarnationID == inc {
			s.touch(req.BrokerID, cur.Fenced, s.get(req.BrokerID).metadataOffset)
			if slices.Equal(cur.Endpoints, endpoints) && cur.Rack == rack && slices.Equal(cur.LogDirs, logDirs) {
				return nil
			}
			c.logger.Info("amending broker registration", "broker", req.BrokerID, "epoch", cur.Epoch)
			return []Record{&RegisterBrokerRecord{
				BrokerID: req.BrokerID, IncarnationID: inc, BrokerEpoch: cur.Epoch,
				EndPoints: endpoints, Rack: rack, Fenced: cur.Fenced, LogDirs: logDirs,
			}}
		}
		var records []Record
		if ok {
			records = c.replication.leaderAndISRUpdates(img, req.BrokerID, NoLeader, inISROrLeading(req.BrokerID))
			c.logger.Info("registering a new incarnation of broker", "broker", req.BrokerID,
				"previousEpoch", cur.Epoch, "partitionChanges", len(records))
		}
		s.register(req.BrokerID)
		return append(records, &RegisterBrokerRecord{
			BrokerID: req.BrokerID, IncarnationID: inc, BrokerEpoch: AssignedBrokerEpoch,
			EndPoints: endpoints, Rack: rack, Fenced: true, LogDirs: logDirs,
		})
	})
	if err != nil {
		resp.ErrorCode, _ = writeErrorCode(err)
		return resp
	}
	b, ok := c.log.Image().Brokers[req.BrokerID]
	if !ok || b.IncarnationID != inc {
		// Replaced by yet another incarnation meanwhile.
		return fail(kerr.DuplicateBrokerRegistration)
	}
	resp.BrokerEpoch = b.Epoch
	return resp
}

// brokerState is BrokerControlState.
type brokerState int8

const (
	stateFenced brokerState = iota
	stateUnfenced
	stateControlledShutdown
	stateShutdownNow
)

func currentState(b *Broker) brokerState {
	switch {
	case b.Fenced:
		return stateFenced
	case b.InControlledShutdown:
		return stateControlledShutdown
	}
	return stateUnfenced
}

// BrokerHeartbeat: v0-2 (ReplicationControlManager.processBrokerHeartbeat
// and BrokerHeartbeatManager.calculateNextBrokerState).
//
// Behavior:
//   - An unknown broker or another epoch is STALE_BROKER_EPOCH.
//   - Fenced: WantShutdown → shut down now; else unfenced once
//     CurrentMetadataOffset reaches the registration's offset (the broker
//     epoch), with the leaderless partitions whose ISR holds it led by it
//     again in the same batch.
//   - Unfenced: WantFence fences it (and WantShutdown with it shuts it
//     down); WantShutdown enters controlled shutdown if it leads anything
//     (its leaderships move to other ISR members, it leaves every ISR it is
//     not the last member of), else shuts down now.
//   - Controlled shutdown: shut down now once it leads nothing and every
//     active broker has applied the batch that moved its leaderships.
//   - Shutting down now fences the broker as a session expiry does.
//   - The answer says IsCaughtUp (offset ≥ registration offset), IsFenced
//     and ShouldShutdown after the change.
func (c *clusterControl) BrokerHeartbeat(ctx context.Context, req *kmsg.BrokerHeartbeatRequest) *kmsg.BrokerHeartbeatResponse {
	resp := req.ResponseKind().(*kmsg.BrokerHeartbeatResponse)
	var (
		stale bool
		next  brokerState
		epoch int64
	)
	err := c.write(ctx, func(img *Image) []Record {
		b, ok := img.Brokers[req.BrokerID]
		if !ok || b.Epoch != req.BrokerEpoch {
			stale = true
			return nil
		}
		epoch = b.Epoch
		s := c.sessionsFor(img)
		sess := s.get(req.BrokerID)
		cur := currentState(b)
		next = c.nextState(img, s, b, cur, req)
		var records []Record
		if next != cur {
			switch next {
			case stateFenced, stateShutdownNow:
				if cur != stateFenced {
					records = c.fenceRecords(img, b)
				}
			case stateUnfenced:
				records = c.unfenceRecords(img, b)
			case stateControlledShutdown:
				records = append(records, &BrokerRegistrationChangeRecord{BrokerID: b.ID, BrokerEpoch: b.Epoch, InControlledShutdown: 1})
				records = append(records, c.replication.leaderAndISRUpdates(img, b.ID, NoLeader, inISROrLeading(b.ID))...)
				sess.controlledShutdownOffset = int64(img.Offset) + 1
				c.logger.Info("broker entered controlled shutdown", "broker", b.ID, "partitionChanges", len(records)-1)
			}
		}
		s.touch(req.BrokerID, next == stateFenced || next == stateShutdownNow, req.CurrentMetadataOffset)
		return records
	})
	if resp.ErrorCode = brokerWriteCode(err, stale); resp.ErrorCode == 0 {
		resp.IsCaughtUp = req.CurrentMetadataOffset >= epoch
		resp.IsFenced = next == stateFenced || next == stateShutdownNow
		resp.ShouldShutdown = next == stateShutdownNow
	}
	return resp
}

// nextState is BrokerHeartbeatManager.calculateNextBrokerState.
func (c *clusterControl) nextState(img *Image, s *sessions, b *Broker, cur brokerState, req *kmsg.BrokerHeartbeatRequest) brokerState {
	switch cur {
	case stateFenced:
		switch {
		case req.WantShutdown:
			return stateShutdownNow
		case !req.WantFence && req.CurrentMetadataOffset >= b.Epoch:
			c.logger.Info("unfencing broker: it caught up with its registration", "broker", b.ID, "offset", req.CurrentMetadataOffset)
			return stateUnfenced
		}
		return stateFenced
	case stateUnfenced:
		switch {
		case req.WantFence && req.WantShutdown:
			return stateShutdownNow
		case req.WantFence:
			return stateFenced
		case req.WantShutdown && leads(img, b.ID):
			return stateControlledShutdown
		case req.WantShutdown:
			return stateShutdownNow
		}
		return stateUnfenced
	case stateControlledShutdown:
		if leads(img, b.ID) {
			return stateControlledShutdown
		}
		if s.get(b.ID).controlledShutdownOffset <= s.lowestActiveOffset(img) {
			return stateShutdownNow
		}
		return stateControlledShutdown
	}
	return stateShutdownNow
}

// fenceRecords fences a broker: out of every ISR it is not the last member
// of, new leaders for its partitions, then the FenceBrokerRecord
// (ReplicationControlManager.handleBrokerFenced).
func (c *clusterControl) fenceRecords(img *Image, b *Broker) []Record {
	records := c.replication.leaderAndISRUpdates(img, b.ID, NoLeader, inISROrLeading(b.ID))
	c.logger.Info("fencing broker", "broker", b.ID, "epoch", b.Epoch, "partitionChanges", len(records))
	return append(records, &FenceBrokerRecord{ID: b.ID, Epoch: b.Epoch})
}

// unfenceRecords unfences a broker and makes it the leader of the
// leaderless partitions whose ISR holds it
// (ReplicationControlManager.handleBrokerUnfenced).
func (c *clusterControl) unfenceRecords(img *Image, b *Broker) []Record {
	records := []Record{&UnfenceBrokerRecord{ID: b.ID, Epoch: b.Epoch}}
	return append(records, c.replication.leaderAndISRUpdates(img, NoLeader, b.ID, leaderless)...)
}

// FenceStaleBrokers fences, one batch each, the unfenced brokers whose
// session expired by the controller's clock
// (ReplicationControlManager.maybeFenceOneStaleBroker), and returns how many.
// The quorum calls it periodically on the active controller; tests call it
// after moving a manual clock.
func (c *clusterControl) FenceStaleBrokers(ctx context.Context) (int, error) {
	n := 0
	for {
		fenced := false
		err := c.write(ctx, func(img *Image) []Record {
			id, ok := c.sessionsFor(img).staleBroker(img)
			if !ok {
				return nil
			}
			fenced = true
			c.logger.Info("broker session expired", "broker", id)
			return c.fenceRecords(img, img.Brokers[id])
		})
		if err != nil {
			return n, fmt.Errorf("raftmeta: fence stale brokers: %w", err)
		}
		if !fenced {
			return n, nil
		}
		n++
	}
}

// allocateProducerIDs answers AllocateProducerIds (67) v0.
func (c *clusterControl) allocateProducerIDs(ctx context.Context, req *kmsg.AllocateProducerIDsRequest) *kmsg.AllocateProducerIDsResponse {
	resp := req.ResponseKind().(*kmsg.AllocateProducerIDsResponse)
	first, n, err := c.AllocateProducerIDs(ctx, req.BrokerID, req.BrokerEpoch)
	var ke *kerr.Error
	switch {
	case err == nil:
		resp.ProducerIDStart, resp.ProducerIDLen = first, n
	case errors.Is(err, kerr.StaleBrokerEpoch):
		resp.ErrorCode = kerr.StaleBrokerEpoch.Code
	case errors.Is(err, ErrNotController), errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		resp.ErrorCode, _ = writeErrorCode(err)
	case errors.As(err, &ke):
		resp.ErrorCode = ke.Code
	default:
		resp.ErrorCode = kerr.UnknownServerError.Code
	}
	return resp
}

// brokerWriteCode is the top-level error code of a request a broker sends
// as itself (heartbeats, AlterPartition, BumpLeaderEpochs): the write's
// failure, else STALE_BROKER_EPOCH when the broker's epoch is not its
// current registration's, else 0.
func brokerWriteCode(err error, stale bool) int16 {
	if err != nil {
		code, _ := writeErrorCode(err)
		return code
	}
	if stale {
		return kerr.StaleBrokerEpoch.Code
	}
	return 0
}
