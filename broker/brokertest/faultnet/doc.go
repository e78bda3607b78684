// Package faultnet is a fault-injecting connection layer for in-process
// multi-node cluster tests: it cuts, slows and resets the links between
// chosen nodes, in the spirit of nats-server's raftTransportHub
// (partition/heal) and Jepsen's network partitions.
//
// In a test cluster every node runs in one process on 127.0.0.1 with its
// own ports, and every inter-node connection (the hashicorp/raft
// transport, the controller RPC client, the followers' replica fetchers
// built on franz-go kgo) is opened through the dialer the node is given.
// A Network hands each node its dialer (Network.Dialer) and learns which
// node owns which listening address (Network.Register), so it knows the
// link (dialing node -> owning node) of every connection.
//
// All faults are applied on the dialing side. The Kafka listener is a gnet
// event loop that accepts sockets itself, so accepted connections cannot be
// wrapped; instead the dialing side's net.Conn wrapper applies a fault in
// both directions: its Write carries the bytes dialer->owner, its Read the
// bytes owner->dialer. A link fault (from, to) therefore acts on the bytes
// flowing from->to whichever node dialed the connection.
//
// Faults look like what TCP shows a program, never like silent loss:
//   - a cut link refuses new dials after a delay, as an unanswered SYN
//     times out (SetCutDialDelay), and resets existing connections by
//     closing the socket, so both ends notice at once;
//   - a lossy link (SetLinkDrop) resets the connection, because TCP never
//     delivers a stream with bytes missing: loss shows as stalls and then
//     a reset;
//   - a slow link (SetLinkDelay) holds bytes back but keeps their order.
//
// Errors from faults wrap ErrLinkCut or ErrLinkDropped and also match the
// errno a kernel would give (syscall.ETIMEDOUT for a refused dial,
// syscall.ECONNRESET for a broken connection), inside *net.OpError, so
// kgo and raft classify them as they would a real network failure.
package faultnet
