package admin

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// Client sends the mirror RPCs to a (destination) cluster. It is safe for
// concurrent use: every method is one request through the kgo client.
type Client struct {
	cl    *kgo.Client
	owned bool // Close closes cl only if NewClient built it
}

// NewClient returns a Client for the cluster at bootstrap (host:port
// strings). It builds a kgo client with the seed brokers and the mirror
// RPCs' max versions, then opts, so an option given here wins; a
// kgo.MaxVersions in opts must list the mirror keys
// (mirrormsg.MaxVersions). Close the Client when done.
func NewClient(bootstrap []string, opts ...kgo.Opt) (*Client, error) {
	if len(bootstrap) == 0 {
		return nil, fmt.Errorf("admin: no bootstrap servers")
	}
	all := append([]kgo.Opt{
		kgo.SeedBrokers(bootstrap...),
		kgo.MaxVersions(mirrormsg.MaxVersions(nil)),
	}, opts...)
	cl, err := kgo.NewClient(all...)
	if err != nil {
		return nil, fmt.Errorf("admin: %w", err)
	}
	return &Client{cl: cl, owned: true}, nil
}

// Wrap returns a Client that sends through cl, which must have been built
// with kgo.MaxVersions(mirrormsg.MaxVersions(...)): kgo fails other
// clients' mirror requests with "request key is unknown". Close does not
// close cl.
func Wrap(cl *kgo.Client) *Client {
	return &Client{cl: cl}
}

// Kgo is the client's kgo client, for the plain Kafka requests a mirror
// command needs beside the mirror RPCs (ListOffsets after a stop).
func (c *Client) Kgo() *kgo.Client { return c.cl }

// Close closes the kgo client if NewClient built it.
func (c *Client) Close() {
	if c.owned {
		c.cl.Close()
	}
}

// defaultTimeoutMs is the TimeoutMs sent when ctx has no deadline, the
// default.api.timeout.ms-like bound Kafka's AdminClient uses (30 s
// request.timeout.ms).
const defaultTimeoutMs = 30_000

// timeoutMs is the server-side timeout of a TimeoutRequest: the time ctx
// has left minus a tenth, so that the broker's own REQUEST_TIMED_OUT
// answer, which says more than a client-side deadline, arrives before ctx
// ends.
func timeoutMs(ctx context.Context) int32 {
	dl, ok := ctx.Deadline()
	if !ok {
		return defaultTimeoutMs
	}
	left := time.Until(dl)
	left -= left / 10
	ms := left.Milliseconds()
	switch {
	case ms < 1:
		return 1
	case ms > math.MaxInt32:
		return math.MaxInt32
	}
	return int32(ms)
}
