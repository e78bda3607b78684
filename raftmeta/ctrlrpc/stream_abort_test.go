package ctrlrpc

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// Abort closes raft's connections, the one a layer dialed and the one it
// accepted, as a halted process drops them; Close leaves both to raft's
// transport. A raft connection closed before Abort is forgotten.
func TestAbortClosesRaftConnections(t *testing.T) {
	for _, abort := range []bool{false, true} {
		name := map[bool]string{false: "close", true: "abort"}[abort]
		t.Run(name, func(t *testing.T) {
			a, b := newDialOnlyLayer(t), newDialOnlyLayer(t)
			dialed, err := a.Dial(raft.ServerAddress(b.Addr().String()), time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer dialed.Close()
			if _, err := dialed.Write([]byte{1}); err != nil { // a raft RPC type byte, not Magic
				t.Fatal(err)
			}
			accepted, err := b.Accept()
			if err != nil {
				t.Fatal(err)
			}
			defer accepted.Close()
			if _, err := io.ReadFull(accepted, make([]byte, 1)); err != nil { // the byte given back
				t.Fatal(err)
			}
			closedEarly, err := a.Dial(raft.ServerAddress(b.Addr().String()), time.Second)
			if err != nil {
				t.Fatal(err)
			}
			closedEarly.Close()
			a.mu.Lock()
			n := len(a.raft)
			a.mu.Unlock()
			if n != 1 {
				t.Fatalf("layer tracks %d raft connections after one of two closed, want 1", n)
			}

			if abort {
				a.Abort()
				b.Abort()
			} else {
				a.Close()
				b.Close()
			}
			for what, c := range map[string]net.Conn{"dialed": dialed, "accepted": accepted} {
				_ = c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
				_, err := c.Read(make([]byte, 1))
				var ne net.Error
				timedOut := errors.As(err, &ne) && ne.Timeout()
				if abort && !errors.Is(err, net.ErrClosed) {
					t.Errorf("%s connection after Abort: read %v, want it closed", what, err)
				}
				if !abort && !timedOut {
					t.Errorf("%s connection after Close: read %v, want it open", what, err)
				}
			}
		})
	}
}
