//go:build linux && !poll_opt

package wire

import (
	"reflect"

	"github.com/panjf2000/gnet/v2"
	"github.com/panjf2000/gnet/v2/pkg/netpoll"
	"golang.org/x/sys/unix"
)

// gnet v2.9 has no way to stop reading one connection (panjf2000/gnet#712
// and #722 ask for it): its loop reads whatever the socket holds into the
// connection's inbound buffer whether or not OnTraffic consumes it, so
// leaving requests unparsed would not bound memory. Kafka's Selector.mute
// takes OP_READ off the channel's key, letting TCP flow control stop the
// client; we do the same by taking EPOLLIN off the connection's epoll
// registration. gnet does not expose its poller, so pollFD finds the
// loop's epoll descriptor by reflection on gnet's unexported
// conn.loop.poller.fd. TestReadPauseStopsSocketReads pins that this works
// with the gnet in go.mod; if a gnet upgrade changes the layout, pollFD
// reports false and a paused connection is closed instead once its
// buffered input passes conn.inboundCap.

// readPauseSupported reports whether paused connections stop being read.
const readPauseSupported = true

var pollerType = reflect.TypeFor[*netpoll.Poller]()

// pollFD returns the epoll descriptor of the event loop that owns gc.
func pollFD(gc gnet.Conn) (int, bool) {
	v := reflect.ValueOf(gc)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return -1, false
	}
	loop := v.Elem().FieldByName("loop")
	if loop.Kind() != reflect.Pointer || loop.IsNil() || loop.Elem().Kind() != reflect.Struct {
		return -1, false
	}
	poller := loop.Elem().FieldByName("poller")
	if !poller.IsValid() || poller.Type() != pollerType || poller.IsNil() {
		return -1, false
	}
	fd := poller.Elem().FieldByName("fd")
	if fd.Kind() != reflect.Int || fd.Int() <= 0 {
		return -1, false
	}
	return int(fd.Int()), true
}

// setReadInterest rewrites the connection's registration in the loop's
// level-triggered epoll set the way gnet's default poller writes it (the
// fd in the event data), with or without EPOLLIN, and with EPOLLOUT while
// gnet has output queued so its write path keeps draining. EPOLLERR and
// EPOLLHUP are always reported, so a connection that dies while paused is
// still closed.
func setReadInterest(epfd, fd int, read, write bool) error {
	var ev uint32
	if read {
		ev |= netpoll.ReadEvents
	}
	if write {
		ev |= netpoll.WriteEvents
	}
	return unix.EpollCtl(epfd, unix.EPOLL_CTL_MOD, fd, &unix.EpollEvent{Events: ev, Fd: int32(fd)})
}
