// Package consume is `strait consume TOPIC...` (issue 28, rpk's `rpk topic
// consume`, kcat's -C): records printed by an rpk-style --format template
// or as JSON lines, from an offset, a timestamp or a group's commits,
// following the topic until -n records or an interrupt.
package consume

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/cmd/strait/ctl/kit"
	"github.com/strait-io/strait/cmd/strait/ctl/recfmt"
)

// Group is `strait consume`.
func Group() *kit.Group {
	return &kit.Group{
		Name:    "consume",
		Summary: "print records of topics, following them",
		Help:    formatHelp,
		Commands: []*kit.Command{{
			Name:    "",
			Args:    "TOPIC... [-o start|end|N|-N|@TIME] [-n N] [-g GROUP] [-f FORMAT] [-p N,...] [--read-committed]",
			Summary: "print the records of TOPIC..., one value per line unless --format or --json say otherwise; follows until -n records or Ctrl-C",
			Examples: []string{
				"strait consume orders -n 10",
				"strait consume orders -o -5 -f '%p/%o %k=%v %h{%k:%v,}\\n'",
				"strait consume orders -o @2026-01-02T15:04:05Z --json",
				"strait consume orders -g billing --read-committed",
			},
			MinArgs: 1, MaxArgs: -1,
			Flags: registerFlags,
			Run:   run,
		}},
	}
}

const formatHelp = `--format prints each record by rpk's template language:
  %t topic  %p partition  %o offset  %k key  %v value  %d timestamp (unix ms;
  %d{rfc3339}, %d{go[2006-01-02]})  %h{%k=%v;} each header  %H header count
  %K %V %T lengths  %e leader epoch  %x %y producer id, epoch  %i records printed
  %v{hex} %v{base64}  \n \t \r \\ \xNN escapes  %% %{ %} literals
The default is '%v\n' (kcat's). --json prints one object per line: topic,
partition, offset, timestamp, key, value, headers (text as UTF-8, else base64
with key_encoding/value_encoding "base64"; --base64 always).
--offset: start, end, N, -N (N before the end), @MILLIS or @RFC3339; with
--group it applies only where the group has no committed offset.`

type flags struct {
	offset        string
	num           int64
	group         string
	format        string
	partitions    string
	readCommitted bool
	base64        bool

	off   kgo.Offset
	parts []int32
	tmpl  *recfmt.Template
}

func registerFlags(fs *flag.FlagSet) any {
	f := &flags{}
	for _, n := range []string{"o", "offset"} {
		fs.StringVar(&f.offset, n, "start", "where to start: `start|end|N|-N|@MILLIS|@RFC3339`")
	}
	for _, n := range []string{"n", "num"} {
		fs.Int64Var(&f.num, n, 0, "exit after `N` records (default: follow until interrupted)")
	}
	for _, n := range []string{"g", "group"} {
		fs.StringVar(&f.group, n, "", "consume in consumer `GROUP`, committing what is printed")
	}
	for _, n := range []string{"f", "format"} {
		fs.StringVar(&f.format, n, `%v\n`, "output `FORMAT` (rpk's; see strait consume --help)")
	}
	for _, n := range []string{"p", "partitions"} {
		fs.StringVar(&f.partitions, n, "", "only these partitions, `N,N,...` (not with --group)")
	}
	fs.BoolVar(&f.readCommitted, "read-committed", false, "skip aborted transactions' records and stop at the last stable offset")
	fs.BoolVar(&f.base64, "base64", false, "with --json, keys and values always in base64")
	return f
}

// Check validates the flags before connecting.
func (f *flags) Check() error {
	var err error
	if f.off, err = parseOffset(f.offset); err != nil {
		return err
	}
	if f.parts, err = parsePartitions(f.partitions); err != nil {
		return err
	}
	if f.tmpl, err = recfmt.Parse(f.format); err != nil {
		return err
	}
	switch {
	case f.num < 0:
		return fmt.Errorf("--num %d: want a positive count", f.num)
	case f.group != "" && len(f.parts) > 0:
		return fmt.Errorf("--partitions cannot be used with --group (the group assigns partitions)")
	}
	return nil
}

func run(ctx context.Context, c *kit.Ctx, topics []string, fl any) int {
	f := fl.(*flags)
	all, missing, err := c.TopicPartitions(ctx, topics...)
	switch {
	case missing != "":
		return c.ItemFailed(missing, err)
	case err != nil:
		return c.Fail(err)
	}
	opts := []kgo.Opt{kgo.ConsumeResetOffset(f.off)}
	switch {
	case len(f.parts) > 0:
		assign := map[string]map[int32]kgo.Offset{}
		for _, t := range topics {
			assign[t] = map[int32]kgo.Offset{}
			for _, p := range f.parts {
				if !slices.Contains(all[t], p) {
					return c.ItemFailed(fmt.Sprintf("%s partition %d", t, p), kerr.UnknownTopicOrPartition)
				}
				assign[t][p] = f.off
			}
		}
		opts = append(opts, kgo.ConsumePartitions(assign))
	case f.group != "":
		// Commits are of what was printed, not what was fetched: a
		// consumer stopped by -n or Ctrl-C resumes at the next record.
		opts = append(opts, kgo.ConsumerGroup(f.group), kgo.ConsumeTopics(topics...), kgo.DisableAutoCommit())
	default:
		opts = append(opts, kgo.ConsumeTopics(topics...))
	}
	if f.readCommitted {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	cl, err := c.Client(opts...)
	if err != nil {
		return c.Fail(err)
	}
	sctx, stop := kit.Streaming(ctx)
	defer stop()

	w := bufio.NewWriter(c.Stdout)
	defer w.Flush()
	var printed int64
	var buf []byte
	for {
		fetches := cl.PollFetches(sctx)
		if sctx.Err() != nil {
			return kit.ExitOK // interrupted: what was printed is committed
		}
		for _, fe := range fetches.Errors() {
			if errors.Is(fe.Err, context.Canceled) || errors.Is(fe.Err, kgo.ErrClientClosed) {
				continue
			}
			w.Flush()
			return c.ItemFailed(fe.Topic, fe.Err)
		}
		var done []*kgo.Record
		fetches.EachRecord(func(r *kgo.Record) {
			if f.num > 0 && printed >= f.num {
				return
			}
			if c.Globals.JSON {
				buf = appendJSON(buf[:0], r, f.base64)
			} else {
				buf = f.tmpl.Append(buf[:0], r, printed)
			}
			w.Write(buf)
			done = append(done, r)
			printed++
		})
		if err := w.Flush(); err != nil {
			return kit.ExitOK // the reader of a pipe went away (head -n): done
		}
		if f.group != "" && len(done) > 0 {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.Globals.Timeout)
			err := cl.CommitRecords(cctx, done...)
			cancel()
			if err != nil {
				return c.ItemFailed(f.group, err)
			}
		}
		if f.num > 0 && printed >= f.num {
			return kit.ExitOK
		}
	}
}

// jsonRecord is one line of --json.
type jsonRecord struct {
	Topic         string       `json:"topic"`
	Partition     int32        `json:"partition"`
	Offset        int64        `json:"offset"`
	Timestamp     int64        `json:"timestamp"`
	Key           *string      `json:"key"`
	KeyEncoding   string       `json:"key_encoding"`
	Value         *string      `json:"value"`
	ValueEncoding string       `json:"value_encoding"`
	Headers       []jsonHeader `json:"headers"`
}

type jsonHeader struct {
	Key           string  `json:"key"`
	Value         *string `json:"value"`
	ValueEncoding string  `json:"value_encoding"`
}

// text is b as a JSON string: UTF-8 as is, anything else (or everything,
// with --base64) in base64; nil stays null (Kafka's null key or value).
func text(b []byte, forceBase64 bool) (*string, string) {
	if b == nil {
		return nil, "utf8"
	}
	if forceBase64 || !utf8.Valid(b) {
		s := base64.StdEncoding.EncodeToString(b)
		return &s, "base64"
	}
	s := string(b)
	return &s, "utf8"
}

func appendJSON(dst []byte, r *kgo.Record, forceBase64 bool) []byte {
	j := jsonRecord{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Timestamp: r.Timestamp.UnixMilli(), Headers: []jsonHeader{}}
	j.Key, j.KeyEncoding = text(r.Key, forceBase64)
	j.Value, j.ValueEncoding = text(r.Value, forceBase64)
	for _, h := range r.Headers {
		jh := jsonHeader{Key: h.Key}
		jh.Value, jh.ValueEncoding = text(h.Value, forceBase64)
		j.Headers = append(j.Headers, jh)
	}
	b, err := json.Marshal(j)
	if err != nil {
		return dst
	}
	return append(append(dst, b...), '\n')
}
