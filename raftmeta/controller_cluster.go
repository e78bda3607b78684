package raftmeta

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
)

// ProducerIDBlockSize is how many producer ids one AllocateProducerIDs
// hands out (ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE).
const ProducerIDBlockSize = 1000

// RegisterBroker registers this or another broker with the endpoints, rack
// and fencing given, in process, without the BrokerRegistration RPC (the
// single-node setup, and tests). The epoch is the registration record's
// offset, as in Kafka (b.Epoch is ignored); read it from the image
// afterwards. A zero IncarnationID gets a random one; registering again
// with the incarnation and fields the image already holds appends nothing
// (a retried registration). A broker registered unfenced this way and
// never heartbeating is fenced when its session expires, unless
// Config.BrokerSessionTimeout is negative; BrokerLifecycle registers and
// heartbeats through the controller channel instead.
func (c *clusterControl) RegisterBroker(ctx context.Context, b Broker) error {
	if b.ID < 0 {
		return fmt.Errorf("raftmeta: register broker: invalid broker id %d", b.ID)
	}
	var idErr error
	err := c.write(ctx, func(img *Image) []Record {
		cur, ok := img.Brokers[b.ID]
		if ok && !b.IncarnationID.IsZero() && cur.IncarnationID == b.IncarnationID &&
			slices.Equal(cur.Endpoints, b.Endpoints) && cur.Rack == b.Rack && cur.Fenced == b.Fenced {
			return nil
		}
		inc := b.IncarnationID
		if inc.IsZero() {
			if inc, idErr = c.newUuid(nil); idErr != nil {
				return nil
			}
		}
		return []Record{&RegisterBrokerRecord{
			BrokerID:      b.ID,
			IncarnationID: inc,
			BrokerEpoch:   AssignedBrokerEpoch,
			EndPoints:     slices.Clone(b.Endpoints),
			Rack:          b.Rack,
			Fenced:        b.Fenced,
			LogDirs:       slices.Clone(b.LogDirs),
		}}
	})
	if err == nil {
		err = idErr
	}
	if err != nil {
		return fmt.Errorf("raftmeta: register broker %d: %w", b.ID, err)
	}
	return nil
}

// AllocateProducerIDs hands the broker the next block of producer ids
// [first, first+count) (ProducerIdControlManager.generateNextProducerId,
// the AllocateProducerIds RPC). The broker must be registered at
// brokerEpoch, else the error wraps kerr.StaleBrokerEpoch; on a follower it
// is ErrNotController.
func (c *clusterControl) AllocateProducerIDs(ctx context.Context, brokerID int32, brokerEpoch int64) (first int64, count int32, err error) {
	var stale error
	err = c.write(ctx, func(img *Image) []Record {
		b, ok := img.Brokers[brokerID]
		switch {
		case !ok:
			stale = fmt.Errorf("broker %d is not registered: %w", brokerID, kerr.StaleBrokerEpoch)
			return nil
		case b.Epoch != brokerEpoch:
			stale = fmt.Errorf("broker %d has epoch %d, not %d: %w", brokerID, b.Epoch, brokerEpoch, kerr.StaleBrokerEpoch)
			return nil
		case img.NextProducerID > math.MaxInt64-ProducerIDBlockSize:
			stale = fmt.Errorf("exhausted all producer ids: %w", kerr.UnknownServerError)
			return nil
		}
		first = img.NextProducerID
		return []Record{&ProducerIdsRecord{
			BrokerID:       brokerID,
			BrokerEpoch:    brokerEpoch,
			NextProducerID: first + ProducerIDBlockSize,
		}}
	})
	if err == nil {
		err = stale
	}
	if err != nil {
		return 0, 0, fmt.Errorf("raftmeta: allocate producer ids: %w", err)
	}
	return first, ProducerIDBlockSize, nil
}
