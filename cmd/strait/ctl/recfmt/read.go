package recfmt

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Reader reads records from input by a template, as rpk's produce does:
// text (%k, %v, %t, %p, %d, a header's %k and %v) ends at the literal text
// that follows it in the template, or at the end of the input when nothing
// follows; a length read before it (%K, %V, %T) makes it exactly that many
// bytes instead; literal text must match exactly.
type Reader struct {
	t   *Template
	br  *bufio.Reader
	max int // the most bytes one text may take
	n   int64
}

// NewReader reads records from r by t. max bounds one text (the record's
// size limit), so a missing delimiter does not read all the input into
// memory.
func (t *Template) NewReader(r io.Reader, max int) (*Reader, error) {
	if err := t.readable(); err != nil {
		return nil, err
	}
	return &Reader{t: t, br: bufio.NewReaderSize(r, 64<<10), max: max}, nil
}

// readable rejects what input cannot carry: verbs the broker assigns and
// text that nothing ends.
func (t *Template) readable() error {
	for i, p := range t.pieces {
		switch p.verb {
		case 'o', 'e', 'x', 'y', 'a', 'i':
			return fmt.Errorf("format: %%%c cannot be read from input (the broker assigns it)", p.verb)
		case 'h':
			if len(p.inner) == 0 || p.inner[len(p.inner)-1].verb != 0 {
				return fmt.Errorf("format: the header template must end with text that ends a header, as %%h{%%k=%%v;}")
			}
			if err := checkDelimited(p.inner); err != nil {
				return err
			}
			if !t.hasCountBefore(i) && i+1 < len(t.pieces) && t.pieces[i+1].verb != 0 {
				return fmt.Errorf("format: %%h{...} must be followed by text, or preceded by %%H (the number of headers)")
			}
		}
	}
	return checkDelimited(t.pieces)
}

func (t *Template) hasCountBefore(i int) bool {
	for _, p := range t.pieces[:i] {
		if p.verb == 'H' {
			return true
		}
	}
	return false
}

// checkDelimited: a text verb followed by another verb cannot be split
// from it unless a length was read before it.
func checkDelimited(ps []piece) error {
	sized := map[byte]bool{}
	for i, p := range ps {
		switch p.verb {
		case 'T', 'K', 'V':
			sized[p.verb+('a'-'A')] = true
		}
		if p.verb == 0 || p.verb == 'h' || sized[p.verb] || i+1 == len(ps) || ps[i+1].verb == 0 {
			continue
		}
		return fmt.Errorf("format: %%%c must be followed by text that ends it, as %%%c\\n", p.verb, p.verb)
	}
	return nil
}

// ErrFormat is input that does not match the template.
var ErrFormat = errors.New("input does not match --format")

// Read reads the next record; io.EOF at the end of the input between
// records. The last record may lack its final delimiter (a last line
// without a newline).
func (r *Reader) Read() (*kgo.Record, error) {
	rec := &kgo.Record{}
	r.n++
	if _, err := r.br.Peek(1); err == io.EOF {
		return nil, io.EOF
	}
	st := &readState{sizes: map[byte]int{}}
	if err := r.readPieces(rec, r.t.pieces, st, nil); err != nil {
		if errors.Is(err, ErrFormat) {
			return nil, fmt.Errorf("record %d: %w", r.n, err)
		}
		return nil, err
	}
	return rec, nil
}

type readState struct {
	sizes   map[byte]int // %K, %V, %T read so far
	headers int          // %H, -1 if not read
	hasH    bool
}

func (r *Reader) readPieces(rec *kgo.Record, ps []piece, st *readState, h *kgo.RecordHeader) error {
	for i := 0; i < len(ps); i++ {
		p := ps[i]
		var next []byte // the literal that ends this text
		if i+1 < len(ps) && ps[i+1].verb == 0 {
			next = ps[i+1].lit
		}
		switch p.verb {
		case 0:
			if err := r.expect(p.lit, i+1 == len(ps) && h == nil); err != nil {
				return err
			}
			continue
		case 'h':
			if err := r.readHeaders(rec, p, next, st); err != nil {
				return err
			}
			continue
		}
		text, consumedNext, err := r.readText(p.verb, next, st, i+2 == len(ps) && h == nil)
		if err != nil {
			return err
		}
		if consumedNext {
			i++
		}
		if err := set(rec, h, p, text, st); err != nil {
			return err
		}
	}
	return nil
}

// readText reads one text: sized, up to next (consumed, reported), or to
// the end of the input. lastDelim: next is the template's final text, so
// the end of the input may stand for it.
func (r *Reader) readText(verb byte, next []byte, st *readState, lastDelim bool) ([]byte, bool, error) {
	if n, ok := st.sizes[verb]; ok {
		delete(st.sizes, verb)
		if n > r.max {
			return nil, false, fmt.Errorf("%w: a length of %d is over the %d-byte limit", ErrFormat, n, r.max)
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(r.br, b); err != nil {
			return nil, false, fmt.Errorf("%w: %d bytes of %%%c wanted, input ended", ErrFormat, n, verb)
		}
		return b, false, nil
	}
	if next == nil {
		b, err := io.ReadAll(io.LimitReader(r.br, int64(r.max)+1))
		if err == nil && len(b) > r.max {
			err = fmt.Errorf("%w: %%%c is over the %d-byte limit", ErrFormat, verb, r.max)
		}
		return b, false, err
	}
	b, found, err := r.readUntil(next)
	if err != nil {
		return nil, false, err
	}
	if !found && !lastDelim {
		return nil, false, fmt.Errorf("%w: input ended before %q", ErrFormat, next)
	}
	return b, true, nil
}

func (r *Reader) readUntil(delim []byte) ([]byte, bool, error) {
	var buf []byte
	last := delim[len(delim)-1]
	for {
		chunk, err := r.br.ReadSlice(last)
		buf = append(buf, chunk...)
		if len(buf) > r.max+len(delim) {
			return nil, false, fmt.Errorf("%w: no %q within %d bytes (the record size limit)", ErrFormat, delim, r.max)
		}
		switch {
		case err == nil:
			if bytes.HasSuffix(buf, delim) {
				return buf[:len(buf)-len(delim)], true, nil
			}
		case errors.Is(err, bufio.ErrBufferFull):
		case err == io.EOF:
			return buf, false, nil
		default:
			return nil, false, err
		}
	}
}

// expect consumes literal text; at the end of the input, a template's
// final text may be missing.
func (r *Reader) expect(lit []byte, last bool) error {
	got, err := r.br.Peek(len(lit))
	if err == io.EOF && len(got) == 0 && last {
		return nil
	}
	if !bytes.Equal(got, lit) {
		return fmt.Errorf("%w: want %q, got %q", ErrFormat, lit, got)
	}
	_, err = r.br.Discard(len(lit))
	return err
}

func (r *Reader) readHeaders(rec *kgo.Record, p piece, next []byte, st *readState) error {
	for n := 0; ; n++ {
		if st.hasH {
			if n == st.headers {
				return nil
			}
		} else if next == nil {
			if _, err := r.br.Peek(1); err == io.EOF {
				return nil
			}
		} else if got, _ := r.br.Peek(len(next)); bytes.Equal(got, next) {
			return nil
		}
		rec.Headers = append(rec.Headers, kgo.RecordHeader{})
		if err := r.readPieces(rec, p.inner, st, &rec.Headers[len(rec.Headers)-1]); err != nil {
			return err
		}
	}
}

// set stores one text read for piece p.
func set(rec *kgo.Record, h *kgo.RecordHeader, p piece, text []byte, st *readState) error {
	num := func() (int64, error) {
		v, err := strconv.ParseInt(string(text), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%w: %%%c wants a number, got %q", ErrFormat, p.verb, text)
		}
		return v, nil
	}
	switch p.verb {
	case 'T', 'K', 'V', 'H':
		v, err := num()
		if err != nil {
			return err
		}
		if v < 0 {
			return fmt.Errorf("%w: %%%c is negative", ErrFormat, p.verb)
		}
		if p.verb == 'H' {
			st.headers, st.hasH = int(v), true
		} else {
			st.sizes[p.verb+('a'-'A')] = int(v)
		}
		return nil
	case 'p':
		v, err := num()
		if err != nil {
			return err
		}
		rec.Partition = int32(v)
		return nil
	case 'd':
		if p.mod == "rfc3339" {
			ts, err := time.Parse(time.RFC3339Nano, string(text))
			if err != nil {
				return fmt.Errorf("%w: %%d{rfc3339}: %v", ErrFormat, err)
			}
			rec.Timestamp = ts
			return nil
		}
		v, err := num()
		if err != nil {
			return err
		}
		rec.Timestamp = time.UnixMilli(v)
		return nil
	}
	b, err := decode(text, p.mod)
	if err != nil {
		return fmt.Errorf("%w: %%%c{%s}: %v", ErrFormat, p.verb, p.mod, err)
	}
	switch {
	case p.verb == 't':
		rec.Topic = string(b)
	case p.verb == 'k' && h != nil:
		h.Key = string(b)
	case p.verb == 'v' && h != nil:
		h.Value = b
	case p.verb == 'k':
		rec.Key = b
	case p.verb == 'v':
		rec.Value = b
	}
	return nil
}

func decode(b []byte, mod string) ([]byte, error) {
	switch mod {
	case "hex":
		return hex.DecodeString(string(b))
	case "base64":
		return base64.StdEncoding.DecodeString(string(b))
	}
	return b, nil
}
