package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestMirrorCLIWhileTheControllerMoves runs `strait mirror` describe,
// pause and resume in a loop against a three-node destination cluster
// while its active controller is stopped (SIGTERM), restarted, and then
// killed (SIGKILL): every command must exit 0. A moving controller is the
// cluster's business; the CLI and the brokers retry around it.
//
// Before the kill the CLI bootstraps from the two other nodes only: a
// SIGKILL of the very broker a write was sent to leaves its outcome
// unknown to the client (it may have happened), which no client can
// retry exactly; a broker forwarding it to the killed controller can, and
// must. One outcome stays unknown whichever broker the CLI talks to: a
// pause or resume whose __mirror_state write waits for the killed node,
// still in that partition's ISR, times out, and the retry meets the
// write's own effect (MIRROR_TOPIC_ALREADY_PAUSED, MIRROR_TOPIC_NOT_PAUSED:
// the topic is in the state asked for), as Kafka's AdminClient meets
// TopicExistsException retrying a CreateTopics. Only a command that was
// under way when the SIGKILL came may answer so; it is logged, not failed.
func TestMirrorCLIWhileTheControllerMoves(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	src := newNode(t)
	src.start()
	const topic = "moving-controller"
	createTopic(t, newAdmin(t, src.kafkaAddr()), topic, 2)
	produceValues(t, ctx, src.kafkaAddr(), topic, seqValues("v", 10)...)

	nodes := newClusterNodes(t, 3)
	for _, cn := range nodes {
		cn.launch()
	}
	for _, cn := range nodes {
		cn.awaitReady(60 * time.Second)
	}
	var (
		mu        sync.Mutex
		failures  []string
		ran       int
		bootstrap = strings.Join(clusterAddrs(nodes), ",")
		phase     = "before"
	)
	setPhase := func(p string) { mu.Lock(); phase = p; mu.Unlock() }
	var kills atomic.Int32 // SIGKILLs sent so far
	run := func(args ...string) (int, string) {
		mu.Lock()
		all := append([]string{"mirror", "--bootstrap-server", bootstrap, "--timeout", "30s"}, args...)
		phase := phase
		mu.Unlock()
		p := startProc(t, t.TempDir(), all...)
		code, err := p.wait(45 * time.Second)
		if err != nil {
			return -1, err.Error()
		}
		if code != 0 {
			return code, fmt.Sprintf("[%s, bootstrap %s] %s", phase, all[2], p.stderr())
		}
		return code, p.stderr()
	}
	for _, args := range [][]string{{"create", "m1", "--source-bootstrap", src.kafkaAddr()}, {"start", "m1", "--topic", topic}} {
		if code, stderr := run(args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
	}

	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			for _, args := range [][]string{{"describe", "m1"}, {"pause", "m1", "--topic", topic}, {"resume", "m1", "--topic", topic}} {
				select {
				case <-stop:
					return
				default:
				}
				start := time.Now()
				killsBefore := kills.Load()
				code, stderr := run(args...)
				mu.Lock()
				ran++
				if code != 0 && kills.Load() != killsBefore && metItsOwnEffect(args[0], stderr) {
					t.Logf("%v spanned the SIGKILL and met its own effect: %s", args, strings.TrimSpace(stderr))
				} else if code != 0 {
					failures = append(failures, fmt.Sprintf("%v (after %v): exit %d: %s", args, time.Since(start).Round(time.Millisecond), code, strings.TrimSpace(stderr)))
				}
				mu.Unlock()
			}
		}
	}()

	// controller is the active controller as a running node names it.
	controller := func(not int32) *clusterNode {
		var c int32
		waitUntil(t, 30*time.Second, "a running node to name an active controller", func() (bool, string) {
			for _, cn := range nodes {
				if !cn.running() {
					continue
				}
				m, err := cn.metadata(ctx)
				if err != nil {
					return false, err.Error()
				}
				if m.ControllerID > 0 && m.ControllerID != not {
					c = m.ControllerID
					return true, ""
				}
			}
			return false, "none"
		})
		return nodes[c-1]
	}
	ranBy := func() int { mu.Lock(); defer mu.Unlock(); return ran }
	waitMore := func(n int) {
		from := ranBy()
		waitUntil(t, 2*time.Minute, fmt.Sprintf("%d more commands", n), func() (bool, string) {
			return ranBy() >= from+n, ""
		})
	}

	waitMore(3)
	first := controller(-1)
	t.Logf("stopping the active controller, node %d", first.id)
	setPhase("stopping")
	first.term()
	setPhase("stopped")
	waitMore(6)
	first.launch()
	first.awaitReady(60 * time.Second)
	setPhase("restarted")
	waitMore(3)
	second := controller(-1)
	var survivors []*clusterNode
	for _, cn := range nodes {
		if cn != second {
			survivors = append(survivors, cn)
		}
	}
	mu.Lock()
	bootstrap = strings.Join(clusterAddrs(survivors), ",")
	mu.Unlock()
	waitMore(3)
	t.Logf("killing the active controller, node %d", second.id)
	setPhase("killing")
	kills.Add(1)
	second.kill()
	setPhase("killed")
	waitMore(6)
	close(stop)
	<-done

	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d commands ran", ran)
	for _, f := range failures {
		t.Error(f)
	}
}

// metItsOwnEffect reports whether a failed pause or resume answered that
// the topic is already in the state the command asks for.
func metItsOwnEffect(command, stderr string) bool {
	switch command {
	case "pause":
		return strings.Contains(stderr, "MIRROR_TOPIC_ALREADY_PAUSED")
	case "resume":
		return strings.Contains(stderr, "MIRROR_TOPIC_NOT_PAUSED")
	}
	return false
}
