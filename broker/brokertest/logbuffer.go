package brokertest

import "sync"

// logBufferMax is how much of the broker's log a failing test prints.
const logBufferMax = 64 << 10

// logBuffer keeps the newest bytes written to it. The broker logs from its
// own goroutines, which may outlive a test function, so its lines go here
// rather than to testing.T.Log (which panics after the test ends).
type logBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func newLogBuffer(max int) *logBuffer { return &logBuffer{max: max} }

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	if over := len(l.buf) - l.max; over > 0 {
		l.buf = append(l.buf[:0], l.buf[over:]...)
	}
	return len(p), nil
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.buf)
}
