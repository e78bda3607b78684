package raftmeta

import (
	"errors"
	"fmt"
	"net"
)

// controllerPortKey holds, in the stable store, the port the CONTROLLER
// listener bound for a BindAddr with port 0.
var controllerPortKey = []byte("strait.controller.port")

// listen binds the CONTROLLER listener. A node told to bind port 0 (a
// broker-only node, whose raft port is its own) takes the port it had
// before when it is free: raft's configuration names every member by
// address, and a voter that came back on another port would be dialed at
// the old one until the leader learned the new one from its registration,
// each attempt waiting out the transport's timeout (ctrlrpc.StreamLayer
// retries a refused dial) while the node could not catch up.
func (q *Quorum) listen(bind string) (net.Listener, error) {
	host, port, err := net.SplitHostPort(bind)
	if err != nil || port != "0" {
		return net.Listen("tcp", bind)
	}
	prev, err := q.store.Get(controllerPortKey)
	switch {
	case err == nil:
		ln, lerr := net.Listen("tcp", net.JoinHostPort(host, string(prev)))
		if lerr == nil {
			return ln, nil
		}
		q.cfg.Logger.Warn("the controller port of the previous start is taken; binding another", "port", string(prev), "err", lerr)
	case !errors.Is(err, ErrKeyNotFound):
		return nil, err
	}
	ln, err := net.Listen("tcp", bind)
	if err != nil {
		return nil, err
	}
	_, p, err := net.SplitHostPort(ln.Addr().String())
	if err == nil {
		err = q.store.Set(controllerPortKey, []byte(p))
	}
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("raftmeta: keeping the controller port: %w", err)
	}
	return ln, nil
}
