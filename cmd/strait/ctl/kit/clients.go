package kit

import (
	"sync"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// clients are a command's franz-go clients, made on first use and closed
// when it returns.
type clients struct {
	mu  sync.Mutex
	all []*kgo.Client
}

func (cs *clients) close() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for _, cl := range cs.all {
		cl.Close()
	}
	cs.all = nil
}

// Conn is the resolved connection (nil for offline commands).
func (c *Ctx) Conn() *Conn { return c.conn }

// Client is a franz-go client for the command's cluster with opts added
// (a producer's or consumer's own); each call makes a new one, closed when
// the command returns.
func (c *Ctx) Client(opts ...kgo.Opt) (*kgo.Client, error) {
	all := []kgo.Opt{kgo.SeedBrokers(c.conn.Brokers...), kgo.ClientID(c.conn.ClientID)}
	all = append(all, c.conn.Opts...)
	all = append(all, opts...)
	cl, err := kgo.NewClient(all...)
	if err != nil {
		return nil, err
	}
	c.clients.mu.Lock()
	c.clients.all = append(c.clients.all, cl)
	c.clients.mu.Unlock()
	return cl, nil
}

// Admin is a kadm client over a new Client.
func (c *Ctx) Admin() (*kadm.Client, error) {
	cl, err := c.Client()
	if err != nil {
		return nil, err
	}
	return kadm.NewClient(cl), nil
}
