package wire

import (
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/authz/reqctx"
	"github.com/strait-io/strait/wire/clientquota"
)

// Client quota enforcement (KIP-13, KIP-55, KIP-124, KIP-219), Kafka's
// ClientQuotaManager and ClientRequestQuotaManager. The quotas are the
// metadata image's (AlterClientQuotas); the user is the name of the
// request's principal (User:alice is alice; an unauthenticated client is
// ANONYMOUS, which user quotas of <default> cover, as in Kafka), the
// client the request header's client id.
//
//   - producer_byte_rate: each produce request's size counts, acks=0 ones
//     too; the request is carried out whatever the rate.
//   - consumer_byte_rate: each consumer fetch response's size counts.
//     Kafka answers a throttled fetch with an empty response; Strait sends
//     the response it has, since the fetch session has already moved past
//     it, and throttles the next: the byte rate over the quota window is
//     the same.
//   - request_percentage: the time the handler took, as a percentage of one
//     thread over the window (Kafka counts request handler thread time).
//     Fetches are left out: a long poll's handler waits for data, and
//     that is not work. An acks=all produce's wait for the in-sync
//     replicas does count (Kafka parks it in purgatory, off the thread):
//     a request_percentage quota is stricter on such producers than
//     Kafka's. Follower fetches, ApiVersions, the SASL requests and the
//     inter-broker APIs are exempt from every quota, as in Kafka.
//
// A request that takes a rate over its quota gets Kafka's throttle time in
// throttle_time_ms (the larger of the byte rate's and the request
// percentage's), its response is sent at once, and the connection is then
// muted for that time: the server reads nothing more from it (KIP-219), so
// a client that ignores throttle_time_ms is held back too, and the
// requests a pipelining client had sent before are handled only once the
// mute ends (waitThrottle), as Kafka, reading one at a time, would. Muting is not
// reading: the event loop takes EPOLLIN off the socket as for
// backpressure (readpause_linux.go), and the listener's tick wakes it to
// look again.

// throttleFor records the request's usage against the quotas that apply
// to it and returns the throttle time, 0 when it is within them (or none
// apply). reqBytes is the request's size, handled how long its handler
// ran.
func (s *Server) throttleFor(info reqctx.Info, kreq kmsg.Request, resp kmsg.Response, reqBytes int, handled time.Duration) time.Duration {
	if s.svc.Cluster == nil || kreq == nil {
		return 0
	}
	img := s.svc.Cluster.Image()
	if img == nil || len(img.ClientQuotas) == 0 {
		return 0
	}
	key := kreq.Key()
	fetch, isFetch := kreq.(*kmsg.FetchRequest)
	if isFetch && isFollowerFetch(fetch) {
		return 0
	}
	user := principalName(info.Principal)
	now := s.clock.Now()
	record := func(kind clientquota.Kind, quotaKey string, v float64) time.Duration {
		q, ok := img.ClientQuota(user, info.ClientID, quotaKey)
		if !ok {
			return 0
		}
		return s.clientQuotas.Record(kind, q.User, q.Client, q.Value, v, now)
	}
	var throttle time.Duration
	quota := QuotaProduce
	switch {
	case key == int16(kmsg.Produce):
		throttle = record(clientquota.Produce, raftmeta.QuotaProducerByteRate, float64(reqBytes))
	case isFetch:
		quota = QuotaFetch
		if fr, ok := resp.(*fetchResponse); ok {
			meta, data := fr.sizes()
			throttle = record(clientquota.Fetch, raftmeta.QuotaConsumerByteRate, float64(meta+data))
		}
	}
	if !isFetch {
		// Percent-seconds: the rate per second is a percentage of one
		// thread (ClientRequestQuotaManager.nanosToPercentage).
		pct := handled.Seconds() * 100
		if d := record(clientquota.Request, raftmeta.QuotaRequestPercentage, pct); d > throttle {
			throttle, quota = d, QuotaRequest
		}
	}
	if qm, ok := s.metrics.(QuotaMetrics); ok && throttle > 0 {
		qm.ClientThrottled(quota, throttle)
	}
	return throttle
}

// QuotaMetrics receives the client quota throttles (Kafka's throttle-time
// sensors of its Produce, Fetch and Request quota managers, without their
// per-user and per-client-id tags). A Metrics that also implements it gets
// them; the others do not.
type QuotaMetrics interface {
	// ClientThrottled records a response throttled for d by a quota of
	// type quota (QuotaProduce, QuotaFetch or QuotaRequest).
	ClientThrottled(quota string, d time.Duration)
}

// The quota types of QuotaMetrics, Kafka's QuotaType names.
const (
	QuotaProduce = "Produce"
	QuotaFetch   = "Fetch"
	QuotaRequest = "Request"
)

// principalName is the name part of a principal ("User:alice" is
// "alice"), which user quota entities name (KafkaPrincipal.getName).
func principalName(p string) string {
	if _, name, ok := strings.Cut(p, ":"); ok {
		return name
	}
	return p
}

// setThrottle puts the throttle in the response's throttle_time_ms (every
// response that has the field; Kafka's sendResponseMaybeThrottle), capped
// at what the field holds.
func setThrottle(resp kmsg.Response, d time.Duration) {
	if tr, ok := resp.(kmsg.SetThrottleResponse); ok {
		ms := min(d.Milliseconds(), int64(^uint32(0)>>1))
		tr.SetThrottle(int32(ms))
	}
}

// throttle mutes the connection until d from now (or later, if it is
// muted longer already): the loop reads no new request before then.
func (cn *conn) throttle(d time.Duration) {
	until := cn.srv.clock.Now().Add(d).UnixNano()
	for {
		cur := cn.throttledUntil.Load()
		if cur >= until || cn.throttledUntil.CompareAndSwap(cur, until) {
			return
		}
	}
}

// throttled reports whether the connection is muted for a quota now (the
// loop looks again on every tick of the listener while it is).
func (cn *conn) throttled() bool {
	until := cn.throttledUntil.Load()
	return until != 0 && cn.srv.clock.Now().UnixNano() < until
}

// waitThrottle holds a request the loop read before the connection was
// muted (a pipelining client's next ones) until the mute ends: Kafka reads
// one request at a time, so it would not have read it yet, and counting it
// at once would let a throttled client through faster than its quota. The
// wait ends early when the connection closes or the server drains.
func (cn *conn) waitThrottle() {
	until := cn.throttledUntil.Load()
	if until == 0 {
		return
	}
	d := time.Duration(until - cn.srv.clock.Now().UnixNano())
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-cn.ctx.Done():
	case <-cn.srv.drainCh:
	}
}
