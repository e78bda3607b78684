//go:build !linux || poll_opt

package wire

import "github.com/panjf2000/gnet/v2"

// Without epoll (or with gnet's poll_opt poller, which keeps a pointer in
// the event data) reads cannot be paused; a paused connection is closed
// once its buffered input passes conn.inboundCap. See readpause_linux.go.
// readPauseSupported reports whether paused connections stop being read.
const readPauseSupported = false

func pollFD(gnet.Conn) (int, bool) { return -1, false }

func setReadInterest(int, int, bool, bool) error { return nil }
