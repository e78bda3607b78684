package raftmeta

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// UnregisterBroker: v0 (ReplicationControlManager.unregisterBroker, KIP-631).
//
// Behavior:
//   - A broker id that is not registered is BROKER_ID_NOT_REGISTERED.
//   - The broker leaves every ISR it is not the last member of, its
//     leaderships move as when it is fenced, and its registration is
//     removed (UnregisterBrokerRecord) in the same batch: placement no
//     longer counts it and DescribeCluster no longer lists it. Its
//     replicas stay assigned until they are reassigned.
//   - As in Kafka, the broker need not be fenced: one still running has
//     its heartbeats refused (STALE_BROKER_EPOCH) and joins no ISR until
//     it restarts and registers again.
func (c *clusterControl) UnregisterBroker(ctx context.Context, req *kmsg.UnregisterBrokerRequest) *kmsg.UnregisterBrokerResponse {
	resp := req.ResponseKind().(*kmsg.UnregisterBrokerResponse)
	var missing bool
	err := c.write(ctx, func(img *Image) []Record {
		b, ok := img.Brokers[req.BrokerID]
		if missing = !ok; missing {
			return nil
		}
		records := c.replication.leaderAndISRUpdates(img, b.ID, NoLeader, inISROrLeading(b.ID))
		delete(c.sessionsFor(img).brokers, b.ID)
		c.logger.Info("unregistering broker", "broker", b.ID, "epoch", b.Epoch, "partitionChanges", len(records))
		return append(records, &UnregisterBrokerRecord{BrokerID: b.ID, BrokerEpoch: b.Epoch})
	})
	switch {
	case err != nil:
		code, msg := writeErrorCode(err)
		resp.ErrorCode, resp.ErrorMessage = code, &msg
	case missing:
		resp.ErrorCode = kerr.BrokerIDNotRegistered.Code
		resp.ErrorMessage = strp(fmt.Sprintf("Broker ID %d is not currently registered", req.BrokerID))
	}
	return resp
}
