package wire

import (
	"testing"
	"time"
)

// Once a connection's socket is lent for a sendfile Fetch, every later
// response goes out on it, in request order and byte for byte, without
// asking the loop again: one grant for the connection's life, and none of
// its responses falls back to gnet.
func TestLentSocketCarriesEveryLaterResponse(t *testing.T) {
	requireSendfile(t)
	ft := newFileTopic(t, "lent", 1, 2<<20, 1000, 64)
	s, _ := newFileServer(t, forceSendfile, ft)
	c := dialRaw(t, s.plaintextAddr())
	corr := int32(0)
	for round := range 10 {
		corr++
		c.send(corr, fetchRequest("lent", 0, 0, int32(64<<10<<(round%4))))
		readFetch(t, c, corr, ft.parts[0], 10*time.Second)
		corr++
		c.send(corr, metadataRequest())
		readMetadata(t, c, corr)
	}
	// Pipelined: fetches and metadata interleaved in one write.
	var batch []byte
	for i := range 6 {
		if i%2 == 0 {
			batch = append(batch, encodeRequest(corr+int32(i)+1, "c", fetchRequest("lent", 0, 0, 256<<10))...)
		} else {
			batch = append(batch, encodeRequest(corr+int32(i)+1, "c", metadataRequest())...)
		}
	}
	c.write(batch)
	for i := range 6 {
		if i%2 == 0 {
			readFetch(t, c, corr+int32(i)+1, ft.parts[0], 10*time.Second)
		} else {
			readMetadata(t, c, corr+int32(i)+1)
		}
	}
	if n := s.socketsLent.Load(); n != 1 {
		t.Fatalf("the loop lent the socket %d times, want once for the connection", n)
	}
	if n := s.directSends.Load(); n != 13 {
		t.Fatalf("%d fetches sent with sendfile, want 13", n)
	}
	if n := s.directFallbacks.Load(); n != 0 {
		t.Fatalf("%d fetches fell back to gnet", n)
	}
	// From the fetch after the grant on, the runner read the requests
	// (reader.go): the pipelined ones above came through it.
	if n := s.readersHandedOver.Load(); n != 1 {
		t.Fatalf("reading was handed over %d times, want once", n)
	}
	c.Close()
	settled(t, s)
}

// A write deadline armed while a transfer waited for a slow reader does
// not outlive it: a connection that stays busy past
// connections.max.idle.ms after such a wait keeps being answered (an
// expired deadline left on the lent socket would fail the next write and
// close the connection).
func TestLentSocketDeadlineClearedAfterWait(t *testing.T) {
	requireSendfile(t)
	ft := newFileTopic(t, "dl", 1, 8<<20, 1000, 64)
	cfg := forceSendfile
	cfg.ConnectionsMaxIdle = 400 * time.Millisecond
	s, _ := newFileServer(t, cfg, ft)
	c := dialRaw(t, s.plaintextAddr())
	smallReadBuffer(c)
	c.send(1, fetchRequest("dl", 0, 0, 8<<20))
	// Let the transfer fill the socket and wait for writability (which
	// arms the deadline) before reading it.
	time.Sleep(100 * time.Millisecond)
	readFetch(t, c, 1, ft.parts[0], 10*time.Second)
	// Busy well past the armed deadline, never idle for as long.
	end := time.Now().Add(1200 * time.Millisecond)
	corr := int32(1)
	for time.Now().Before(end) {
		corr++
		if corr%2 == 0 {
			c.send(corr, metadataRequest())
			readMetadata(t, c, corr)
		} else {
			c.send(corr, fetchRequest("dl", 0, 0, 64<<10))
			readFetch(t, c, corr, ft.parts[0], 5*time.Second)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n := s.socketsLent.Load(); n != 1 {
		t.Fatalf("the socket was lent %d times, want once", n)
	}
	c.Close()
	settled(t, s)
}
