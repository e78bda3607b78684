// Package produce is `strait produce TOPIC` (issue 28, rpk's `rpk topic
// produce`): records read from stdin, one per line or by an rpk-style
// --format, produced with the compression, acks and (optionally) one
// transaction the user asks for.
package produce

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/cmd/strait/ctl/kit"
	"github.com/strait-io/strait/cmd/strait/ctl/recfmt"
)

// Group is `strait produce`.
func Group() *kit.Group {
	return &kit.Group{
		Name:    "produce",
		Summary: "produce records read from stdin to a topic",
		Help:    formatHelp,
		Commands: []*kit.Command{{
			Name:    "",
			Args:    "TOPIC [-f FORMAT] [-k KEY] [-H k=v]... [-p N] [-z CODEC] [--acks -1|0|1] [--transactional-id ID] [-q]",
			Summary: "produce records read from stdin to TOPIC, one per line unless --format says otherwise",
			Examples: []string{
				"echo hello | strait produce orders",
				"printf 'k1 v1\\nk2 v2\\n' | strait produce orders -f '%k %v\\n'",
				"strait produce orders -f '%k %h{%k=%v;} %v\\n' -z zstd --acks 1",
				"strait consume a -n 100 -f '%k %v\\n' | strait produce b -f '%k %v\\n' --transactional-id copy-a-b",
			},
			MinArgs: 1, MaxArgs: 1,
			Flags: registerFlags,
			Run:   run,
		}},
	}
}

// formatHelp is the template language, shared with `strait consume`.
const formatHelp = `--format reads records as rpk's does: text verbs end at the text that follows
them in the format (or at the end of input), literal text must match:
  %k key  %v value  %t topic  %p partition (overrides --partition)
  %d timestamp (unix ms; %d{rfc3339})  %K %V %T lengths: the text that follows
  is then exactly that many bytes  %H number of headers  %h{%k=%v;} headers
  %v{hex} %v{base64} decode  \n \t \r \\ \xNN escapes  %% %{ %} literals
The default is '%v\n': one record per line.`

type flags struct {
	format      string
	key         string
	headers     kit.KeyValues
	partition   int
	compression string
	acks        int
	txnID       string
	maxBytes    int
	quiet       bool
	autoCreate  bool

	tmpl  *recfmt.Template
	codec kgo.CompressionCodec
}

func registerFlags(fs *flag.FlagSet) any {
	f := &flags{}
	for _, n := range []string{"f", "format"} {
		fs.StringVar(&f.format, n, `%v\n`, "input `FORMAT` (rpk's; see strait produce --help)")
	}
	for _, n := range []string{"k", "key"} {
		fs.StringVar(&f.key, n, "", "a `KEY` for every record (a key read by --format wins)")
	}
	for _, n := range []string{"H", "header"} {
		fs.Var(&f.headers, n, "a header `k=v` added to every record (repeatable)")
	}
	for _, n := range []string{"p", "partition"} {
		fs.IntVar(&f.partition, n, -1, "produce to partition `N` (default: by key, else sticky)")
	}
	for _, n := range []string{"z", "compression"} {
		fs.StringVar(&f.compression, n, "snappy", "`CODEC`: none, gzip, snappy, lz4 or zstd")
	}
	fs.IntVar(&f.acks, "acks", -1, "acks the leader waits for: -1 (all in-sync replicas), 1 (leader) or 0 (none)")
	fs.StringVar(&f.txnID, "transactional-id", "", "produce the whole input in one transaction of this `ID`, committed at the end of input")
	fs.IntVar(&f.maxBytes, "max-message-bytes", -1, "the largest record batch in `BYTES` (default: the client's, 1 MB)")
	for _, n := range []string{"q", "quiet"} {
		fs.BoolVar(&f.quiet, n, false, "print nothing for records produced")
	}
	fs.BoolVar(&f.autoCreate, "allow-auto-topic-creation", false, "let a broker that auto-creates topics create TOPIC (default: a missing topic is an error)")
	return f
}

// Check validates the flags before anything is read or sent.
func (f *flags) Check() error {
	t, err := recfmt.Parse(f.format)
	if err != nil {
		return err
	}
	f.tmpl = t
	switch f.compression {
	case "none":
		f.codec = kgo.NoCompression()
	case "gzip":
		f.codec = kgo.GzipCompression()
	case "snappy":
		f.codec = kgo.SnappyCompression()
	case "lz4":
		f.codec = kgo.Lz4Compression()
	case "zstd":
		f.codec = kgo.ZstdCompression()
	default:
		return fmt.Errorf("--compression %q: want none, gzip, snappy, lz4 or zstd", f.compression)
	}
	switch {
	case f.acks < -1 || f.acks > 1:
		return fmt.Errorf("--acks %d: want -1, 0 or 1", f.acks)
	case f.txnID != "" && f.acks != -1:
		return fmt.Errorf("--transactional-id needs --acks -1 (a transaction is idempotent)")
	case f.maxBytes == 0 || f.maxBytes < -1:
		return fmt.Errorf("--max-message-bytes %d: want a positive size", f.maxBytes)
	case f.partition < -1:
		return fmt.Errorf("--partition %d: want a partition number", f.partition)
	}
	return nil
}

// defaultMaxBytes is franz-go's default batch limit, Kafka's
// max.message.bytes default (1 MB plus the batch overhead).
const defaultMaxBytes = 1000012

// produced is one record's line of --json.
type produced struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	Timestamp int64  `json:"timestamp"`
}

func run(ctx context.Context, c *kit.Ctx, args []string, fl any) int {
	f := fl.(*flags)
	topic := args[0]
	maxBytes := f.maxBytes
	if maxBytes < 0 {
		maxBytes = defaultMaxBytes
	}
	if !f.autoCreate {
		switch _, missing, err := c.TopicPartitions(ctx, topic); {
		case missing != "":
			return c.ItemFailed(missing, err)
		case err != nil:
			return c.Fail(err)
		}
	}
	opts := []kgo.Opt{
		kgo.DefaultProduceTopic(topic),
		kgo.ProducerBatchCompression(f.codec),
		kgo.ProducerBatchMaxBytes(int32(maxBytes)),
		kgo.RecordDeliveryTimeout(c.Globals.Timeout),
		kgo.ProduceRequestTimeout(c.Globals.Timeout),
	}
	switch f.acks {
	case 0:
		opts = append(opts, kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite())
	case 1:
		opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	}
	if f.partition >= 0 || f.tmpl.Has('p') {
		opts = append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	}
	if f.autoCreate {
		opts = append(opts, kgo.AllowAutoTopicCreation())
	}
	if f.txnID != "" {
		opts = append(opts, kgo.TransactionalID(f.txnID))
	}
	cl, err := c.Client(opts...)
	if err != nil {
		return c.Fail(err)
	}
	rd, err := f.tmpl.NewReader(c.Stdin, maxBytes)
	if err != nil {
		return c.Usagef("%v", err)
	}
	if f.txnID != "" {
		if err := cl.BeginTransaction(); err != nil {
			return c.Fail(err)
		}
	}

	sctx, stop := kit.Streaming(ctx)
	defer stop()
	p := &printer{c: c, quiet: f.quiet, acks0: f.acks == 0}
	inputErr, interrupted := produceAll(sctx, cl, rd, f, p)

	// What was read is delivered (or fails) within --timeout of the end
	// of input, interrupted or not.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.Globals.Timeout)
	defer cancel()
	flushErr := cl.Flush(fctx)
	failed := p.err()
	if failed == nil {
		failed = flushErr
	}
	if f.txnID != "" {
		commit := failed == nil && inputErr == nil && !interrupted
		try := kgo.TryAbort
		if commit {
			try = kgo.TryCommit
		}
		if err := cl.EndTransaction(fctx, try); err != nil && failed == nil {
			failed = fmt.Errorf("ending transaction %s: %w", f.txnID, err)
		}
		if !commit && failed == nil && inputErr == nil {
			failed = fmt.Errorf("interrupted: transaction %s aborted", f.txnID)
		}
	}
	switch {
	case inputErr != nil:
		return c.Fail(inputErr)
	case failed != nil:
		return c.Fail(failed)
	}
	return kit.ExitOK
}

// produceAll produces every record of the input until its end, the first
// failed record, or an interrupt. Reading stdin blocks, so it runs aside
// and an interrupt does not wait for the next line.
func produceAll(ctx context.Context, cl *kgo.Client, rd *recfmt.Reader, f *flags, p *printer) (inputErr error, interrupted bool) {
	type read struct {
		rec *kgo.Record
		err error
	}
	recs := make(chan read)
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			rec, err := rd.Read()
			select {
			case recs <- read{rec, err}:
			case <-done:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	for {
		var r read
		select {
		case <-ctx.Done():
			return nil, true
		case r = <-recs:
		}
		if errors.Is(r.err, io.EOF) {
			return nil, false
		}
		if r.err != nil {
			return r.err, false
		}
		if p.err() != nil {
			return nil, false
		}
		rec := r.rec
		if rec.Key == nil && f.key != "" {
			rec.Key = []byte(f.key)
		}
		for _, h := range f.headers {
			rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: h[0], Value: []byte(h[1])})
		}
		if f.partition >= 0 && !f.tmpl.Has('p') {
			rec.Partition = int32(f.partition)
		}
		cl.Produce(ctx, rec, p.produced)
	}
}

// printer prints each record's result as it is acknowledged.
type printer struct {
	c     *kit.Ctx
	quiet bool
	acks0 bool // no acknowledgement: no offset to print

	mu    sync.Mutex
	n     int
	first error
}

func (p *printer) produced(r *kgo.Record, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		if p.first == nil {
			p.first = err
		}
		return
	}
	p.n++
	if p.quiet {
		return
	}
	offset := r.Offset
	if p.acks0 {
		offset = -1
	}
	if p.c.Globals.JSON {
		b, _ := json.Marshal(produced{Topic: r.Topic, Partition: r.Partition, Offset: offset, Timestamp: r.Timestamp.UnixMilli()})
		fmt.Fprintf(p.c.Stdout, "%s\n", b)
		return
	}
	if p.acks0 {
		fmt.Fprintf(p.c.Stdout, "Produced to partition %d (acks 0: offset unknown)\n", r.Partition)
		return
	}
	fmt.Fprintf(p.c.Stdout, "Produced to partition %d at offset %d with timestamp %d.\n", r.Partition, offset, r.Timestamp.UnixMilli())
}

func (p *printer) err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.first
}
