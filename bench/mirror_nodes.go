package bench

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// mirrorPair is the source and destination of the mirror workload: two
// `strait serve` children, each a single-node cluster of its own (separate
// log.dirs, ports and cluster ids), running side by side for the whole run.
type mirrorPair struct {
	sourceNodes, destNodes *serveCluster
	source, dest           *Broker
}

// startMirrorPair starts both nodes at once under base/source and
// base/destination and waits until both are ready.
func startMirrorPair(ctx context.Context, cfg *MirrorConfig, base string) (*mirrorPair, error) {
	srcSpecs, err := nodeSpecs(filepath.Join(base, "source"), 1)
	if err != nil {
		return nil, err
	}
	dstSpecs, err := nodeSpecs(filepath.Join(base, "destination"), 1)
	if err != nil {
		return nil, err
	}
	type started struct {
		c   *serveCluster
		err error
	}
	srcDone := make(chan started, 1)
	go func() {
		c, err := startCluster(ctx, cfg.ServeCommand, srcSpecs, cfg.Sets)
		srcDone <- started{c, err}
	}()
	dst, dstErr := startCluster(ctx, cfg.ServeCommand, dstSpecs, cfg.Sets)
	src := <-srcDone
	if src.err != nil || dstErr != nil {
		for _, c := range []*serveCluster{src.c, dst} {
			if c != nil {
				c.stop()
			}
		}
		if src.err != nil {
			return nil, fmt.Errorf("bench: mirror source: %w", src.err)
		}
		return nil, fmt.Errorf("bench: mirror destination: %w", dstErr)
	}
	return &mirrorPair{
		sourceNodes: src.c,
		destNodes:   dst,
		source:      &Broker{Label: labelSource, Addrs: src.c.addrs(), PID: src.c.pids()[0]},
		dest:        &Broker{Label: labelDest, Addrs: dst.addrs(), PID: dst.pids()[0]},
	}, nil
}

// stop stops the destination first, so its mirror fetchers do not spend
// the shutdown retrying a source that is gone, then the source.
func (p *mirrorPair) stop() {
	p.destNodes.stop()
	p.sourceNodes.stop()
}

// mirrorAdvertised asks the broker at bootstrap whether it serves the
// mirror RPCs: CreateMirror, key 94 (provisional, raftmeta/mirrormsg), in its
// ApiVersions. A broker registers keys 94-105 only with a mirror service.
func mirrorAdvertised(ctx context.Context, bootstrap []string) (bool, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap...))
	if err != nil {
		return false, fmt.Errorf("bench: admin client: %w", err)
	}
	defer cl.Close()
	resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl)
	if err != nil {
		return false, fmt.Errorf("bench: ApiVersions of %v: %w", bootstrap, err)
	}
	for _, k := range resp.ApiKeys {
		if k.ApiKey == mirrormsg.KeyCreateMirror {
			return true, nil
		}
	}
	return false, nil
}
