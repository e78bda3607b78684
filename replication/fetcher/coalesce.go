package fetcher

import "github.com/strait-io/strait/storage"

// Why a follower streaming from its leader asks for larger fetches.
//
// A replica's fetch asks the leader for replica.fetch.min.bytes (1) and
// waits at most replica.fetch.wait.max.ms (500 ms): the leader answers as
// soon as any data is there. Under a heavy produce load each answer
// therefore carries the few batches appended since the last one, and the
// round trips, not the bytes, are most of what replication costs: every
// fetch is a request and an answer to read, parse and write on both
// brokers, with the wake-ups that go with them. On our three-node test
// machine (2 cores) a 512 MiB RF=3 acks=all run took 11.0-11.3k follower
// fetches; coalescing as below took 6.4-6.5k, used 9-16% less node CPU
// and went 3-15% faster.
//
// Waiting costs latency, though, which a replica at a low rate should not
// pay. So a follower coalesces only while its leader streams: when the
// last answer carried at least half of CoalesceMinBytes, the next fetch
// asks for CoalesceMinBytes with at most CoalesceWaitMs; an answer below
// that (the wait ran out) returns it to the configured settings. Below
// about CoalesceMinBytes/2 per round trip (some 20 MiB/s per leader and
// follower on that machine) fetches are Kafka's; above it an append waits
// at most CoalesceWaitMs longer to reach the followers. Acknowledgements
// are not delayed: a follower's fetch offset reaches the leader when its
// fetch arrives, before the fetch waits. This is Strait's own behaviour,
// off with replica.fetch.coalesce.wait.ms=0.

// fetchBounds are the MinBytes and MaxWaitMillis of the next fetch.
func (e *KafkaEndPoint) fetchBounds() (minBytes, maxWaitMs int32) {
	if !e.streaming || e.CoalesceWaitMs <= 0 || e.CoalesceMinBytes <= e.MinBytes {
		return e.MinBytes, e.MaxWaitMs
	}
	return e.CoalesceMinBytes, min(e.MaxWaitMs, e.CoalesceWaitMs)
}

// observeFetch notes how much record data an answer carried.
func (e *KafkaEndPoint) observeFetch(data map[storage.TopicPartition]*FetchData) {
	n := 0
	for _, d := range data {
		n += len(d.RecordBatches)
	}
	e.streaming = n >= int(e.CoalesceMinBytes)/2
}
