// Package kfakepeer runs franz-go's kfake as the side-by-side peer of
// `strait bench --peer kfake`. It lives apart from package bench so that
// kfake, a test broker, stays out of the shipped strait binary (issue 26):
// the peer runs as its own program, bench/cmd/kfake-serve, which `make
// bench` builds beside bin/strait, and tests start it in-process.
package kfakepeer

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/twmb/franz-go/pkg/kfake"
)

// ListenPrefix starts the line Main prints once kfake listens; the parent
// bench reads the addresses after it.
const ListenPrefix = "kfake-serve listening on "

// Cluster is a running kfake.
type Cluster struct {
	Addrs []string
	c     *kfake.Cluster
}

// Close stops it.
func (c *Cluster) Close() { c.c.Close() }

// Start starts kfake with brokers nodes, on consecutive ports from port
// (0: random) and, with a non-nil tc, listening with TLS.
func Start(brokers, port int, tc *tls.Config) (*Cluster, error) {
	opts := []kfake.Opt{kfake.NumBrokers(brokers)}
	if tc != nil {
		opts = append(opts, kfake.TLS(tc))
	}
	if port != 0 {
		ports := make([]int, brokers)
		for i := range ports {
			ports[i] = port + i
		}
		opts = append(opts, kfake.Ports(ports...))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("kfake: %w", err)
	}
	return &Cluster{Addrs: c.ListenAddrs(), c: c}, nil
}

// Main is the kfake-serve program: kfake until ctx ends or, with
// --exit-on-stdin-eof, until stdin closes (the parent bench's way of
// saying stop, and why the child dies with its parent). With
// --tls-keystore (a PEM file of key and chain) it listens with TLS.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kfake-serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	port := fs.Int("port", 0, "first port to listen on (0: random)")
	brokers := fs.Int("brokers", 1, "kfake brokers")
	watch := fs.Bool("exit-on-stdin-eof", false, "exit when stdin closes (set by the parent bench)")
	keystore := fs.String("tls-keystore", "", "listen with TLS: a PEM file of the private key and certificate chain (set by the parent bench's --tls)")
	pprofAddr := fs.String("pprof", "", "serve Go's profiles (net/http/pprof) under /debug/pprof/ on this host:port (set by the parent bench's --profile)")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "kfake-serve: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *brokers < 1 {
		fmt.Fprintf(stderr, "kfake-serve: --brokers %d < 1\n", *brokers)
		return 2
	}
	var tc *tls.Config
	if *keystore != "" {
		var err error
		if tc, err = ServerTLS(*keystore); err != nil {
			fmt.Fprintf(stderr, "kfake-serve: %v\n", err)
			return 1
		}
	}
	c, err := Start(*brokers, *port, tc)
	if err != nil {
		fmt.Fprintf(stderr, "kfake-serve: %v\n", err)
		return 1
	}
	defer c.Close()
	if *pprofAddr != "" {
		stopPprof, err := servePprof(*pprofAddr)
		if err != nil {
			fmt.Fprintf(stderr, "kfake-serve: %v\n", err)
			return 1
		}
		defer stopPprof()
	}
	fmt.Fprintf(stdout, "%s%s\n", ListenPrefix, strings.Join(c.Addrs, ","))
	eof := make(chan struct{})
	if *watch {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			close(eof)
		}()
	}
	select {
	case <-ctx.Done():
	case <-eof:
	}
	return 0
}

// ServerTLS is a listener's TLS configuration from keystore, a PEM file
// of the private key and the certificate chain (what bench --tls writes):
// TLS 1.2 and 1.3 as Strait's SSL listener serves, with Go's default
// cipher suites, so both peers negotiate the same cipher.
func ServerTLS(keystore string) (*tls.Config, error) {
	b, err := os.ReadFile(keystore)
	if err != nil {
		return nil, fmt.Errorf("tls: %w", err)
	}
	// X509KeyPair takes the CERTIFICATE blocks of its first argument and
	// the key block of its second, skipping the rest: one file serves as
	// both.
	cert, err := tls.X509KeyPair(b, b)
	if err != nil {
		return nil, fmt.Errorf("tls: %s: %w", keystore, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}
