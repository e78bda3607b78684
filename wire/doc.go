// Package wire is Strait's Kafka protocol surface: a gnet v2 server that
// frames requests, runs each on its own goroutine through the handler
// registered for its API key, and writes the responses back in request
// order. Handlers hold no business state; they translate kmsg requests
// into calls on Services.
//
// Threading. gnet event loops only split frames (refusing a size above
// socket.request.max.bytes before allocating it), read request headers and
// write responses; they never block. A request's goroutine decodes the
// body, waits for its turn, calls the handler and queues the encoded
// response; responses leave in request order whatever order the handlers
// finish in. A producing or fetching connection is the exception to who
// reads: once its socket is lent to its writer (or it is a TLS
// connection), the loop hands reading over to the connection's runner
// goroutine, which reads the next requests itself when it has none left
// to run, with the same checks the loop makes (reader.go).
//
// Order. A connection's requests are handled one after another, Kafka's
// guarantee that requests on a connection are processed in the order
// sent. A handler that parks after its order-sensitive step calls Unmute
// so that a request of the same API key behind it may start (a pipelined
// producer's next append); a request of any other key still waits until
// the requests before it have been handled, so it answers with the state
// they leave (a Metadata request after a produce that waited out a
// failover).
//
// Accepting. Each listener accepts on its own socket and hands every
// connection to the event loops of a gnet engine that has no listener of
// its own, so that an accept(2) failure such as EMFILE is retried instead
// of stopping gnet's engine (accept.go). Kafka's connection quotas,
// max.connections and max.connections.per.ip, apply there (quotas.go).
//
// Backpressure. A connection with MaxInflightRequests requests read but
// not answered, or MaxBufferedResponseBytes of responses not yet written,
// is not read until that drains (Kafka mutes the channel): the server
// takes EPOLLIN off the socket, so a client that never reads its responses
// is stopped by TCP flow control instead of growing the server's memory.
//
// Request memory. Each request is read into a buffer of its own size,
// reserved from a pool of queued.max.request.bytes (KIP-72) once its size
// prefix is read and filled straight from the socket reads; a connection
// whose next request does not fit is not read until memory comes back.
// See reqmem.go for who waits and who does not, and reclaim.go for how the
// memory of dropped buffers comes back.
//
// Fetch. A Fetch response's record data stays in the segment files until
// it is written. When it reaches the head of its connection's queue on a
// plaintext listener and gnet holds no output for the connection, the
// request's goroutine borrows the socket from the event loop and sends the
// response itself with write(2) and sendfile(2), as Kafka does with
// FileChannel.transferTo; the responses behind it wait. Otherwise the data
// is read into one pooled buffer that goes back to its pool when gnet's
// write completes. See sendfile.go for why nothing else can write the
// socket meanwhile, and bufpool.go for when a buffer may be reused.
//
// Handler files are named after their API key (18_api_versions.go) and
// open with a kfake-style comment: versions, behaviour, version notes with
// KIPs. Each registers itself in init; ApiVersions is built from that
// registry, less the keys the server's Services cannot answer: the
// KIP-1279 mirror RPCs (94_create_mirror.go ... 105_bump_leader_epochs.go,
// types in raftmeta/mirrormsg) only exist for a server with a MirrorService.
package wire
