package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/wire/tlstest"
)

// TestSSLBinaryKcatAndFranzGo starts the strait binary as a user would
// with its client and controller listeners on SSL (PEM keystore and
// truststore files, client certificates required) and has librdkafka
// (kcat) and franz-go produce and consume over it; kcat without a client
// certificate gets nothing, and the broker keeps serving.
func TestSSLBinaryKcatAndFranzGo(t *testing.T) {
	ca := tlstest.NewCA(t, "strait-e2e-ca")
	dir := t.TempDir()
	client := ca.Issue(t, "kcat-client")
	n := newNode(t, tlstest.AllSSLMutualConfig(t, dir, ca)...)
	n.start()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	cl, err := kgo.NewClient(kgo.SeedBrokers(n.kafkaAddr()), kgo.DialTLSConfig(tlstest.ClientConfig(ca, client)))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 3, 1, nil, "tls-e2e"); err != nil {
		t.Fatalf("create topic over SSL: %v", err)
	}

	if _, err := exec.LookPath("kcat"); err == nil {
		sslArgs := []string{"-b", n.kafkaAddr(), "-X", "security.protocol=ssl",
			"-X", "ssl.ca.location=" + tlstest.WriteFile(t, dir, "client-ca.pem", ca.PEM),
			"-X", "ssl.certificate.location=" + tlstest.WriteFile(t, dir, "client.pem", client.CertPEM),
			"-X", "ssl.key.location=" + tlstest.WriteFile(t, dir, "client.key", client.KeyPEM)}
		kcat(t, ctx, keyedLines("tls", 0, 500), append([]string{"-P", "-t", "tls-e2e", "-K:", "-X", "acks=all"}, sslArgs...)...)
		msgs := decodeKcatMessages(t, kcat(t, ctx, "", append([]string{"-C", "-t", "tls-e2e", "-o", "beginning", "-e", "-q", "-J"}, sslArgs...)...))
		if len(msgs) != 500 {
			t.Fatalf("kcat consumed %d messages over SSL, want 500", len(msgs))
		}
		// Without a client certificate librdkafka's handshake fails.
		noCert := exec.CommandContext(ctx, "kcat", "-L", "-m", "3", "-b", n.kafkaAddr(), "-X", "security.protocol=ssl",
			"-X", "ssl.ca.location="+dir+"/client-ca.pem")
		out, err := noCert.CombinedOutput()
		if err == nil {
			t.Fatalf("kcat without a client certificate listed metadata:\n%s", out)
		}
		if !strings.Contains(strings.ToLower(string(out)), "ssl") {
			t.Fatalf("kcat without a client certificate failed without an SSL error:\n%s", out)
		}
	} else {
		t.Log("*** kcat is not installed: the librdkafka part is SKIPPED ***")
	}

	// franz-go reads what kcat wrote and writes its own.
	var rs []*kgo.Record
	for i := range 100 {
		rs = append(rs, &kgo.Record{Topic: "tls-e2e", Value: fmt.Appendf(nil, "franz-%d", i)})
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatalf("franz-go produce over SSL: %v", err)
	}
	offs, err := adm.ListEndOffsets(ctx, "tls-e2e")
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	offs.Each(func(o kadm.ListedOffset) { total += o.Offset })
	want := int64(100)
	if _, err := exec.LookPath("kcat"); err == nil {
		want += 500
	}
	if total != want {
		t.Fatalf("end offsets sum to %d, want %d", total, want)
	}
}

// TestSSLConnectionStormHeldAtOpenFileLimit: with an SSL listener, the
// connection limit derived from the open-file limit counts the three
// descriptors a TLS connection holds (its socket and the relay's
// socketpair), so a storm of completed TLS handshakes is held back
// before the process runs out of descriptors, and the broker serves
// again once the storm is gone.
func TestSSLConnectionStormHeldAtOpenFileLimit(t *testing.T) {
	const limit = 512
	ca := tlstest.NewCA(t, "strait-e2e-ca")
	dir := t.TempDir()
	n := newNode(t,
		"listener.security.protocol.map=PLAINTEXT:SSL,CONTROLLER:PLAINTEXT",
		"ssl.keystore.type=PEM",
		"ssl.keystore.location="+tlstest.WriteKeystore(t, dir, "broker.pem", ca.Issue(t, "broker", "localhost", "127.0.0.1")),
	)
	n.via = []string{prlimitBin(t), fmt.Sprintf("--nofile=%d:%d", limit, limit), "--"}
	p := n.start()
	maxConns := derivedMaxConnections(t, p)
	if 3*maxConns >= limit {
		t.Fatalf("derived max.connections %d, want 1..%d (three descriptors per TLS connection)", maxConns, limit/3)
	}
	clientCfg := tlstest.ClientConfig(ca, nil)

	// The storm: twice the open-file limit in TLS handshakes at once.
	var mu sync.Mutex
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	var wg sync.WaitGroup
	for range 2 * limit {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := tls.DialWithDialer(&net.Dialer{Timeout: 3 * time.Second}, "tcp", n.kafkaAddr(), clientCfg)
			if err == nil {
				mu.Lock()
				conns = append(conns, c)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	mu.Lock()
	held := len(conns)
	mu.Unlock()
	if held > maxConns {
		t.Fatalf("%d TLS connections completed their handshake, max.connections %d", held, maxConns)
	}
	if fds := openFDs(t, p.cmd.Process.Pid); fds >= limit {
		t.Fatalf("the broker has %d descriptors open of its %d", fds, limit)
	}
	mu.Lock()
	for _, c := range conns {
		c.Close()
	}
	conns = nil
	mu.Unlock()

	cl, err := kgo.NewClient(kgo.SeedBrokers(n.kafkaAddr()), kgo.DialTLSConfig(clientCfg))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.Ping(ctx); err != nil {
		t.Fatalf("after the storm: %v", err)
	}
	if p.exited() {
		t.Fatalf("the broker exited during the storm:\n%s", tail(p.stderr(), 3000))
	}
	t.Logf("open-file limit %d: max.connections derived %d; %d TLS connections held during the storm", limit, maxConns, held)
}
