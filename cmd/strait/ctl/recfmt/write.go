package recfmt

import (
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Append appends r printed by the template to dst; n is the number of
// records printed before it (%i).
func (t *Template) Append(dst []byte, r *kgo.Record, n int64) []byte {
	for _, p := range t.pieces {
		dst = appendPiece(dst, p, r, n, nil)
	}
	return dst
}

// appendPiece prints one piece; h is the header being printed inside
// %h{...}, where %k and %v are its key and value.
func appendPiece(dst []byte, p piece, r *kgo.Record, n int64, h *kgo.RecordHeader) []byte {
	num := func(v int64) []byte { return strconv.AppendInt(dst, v, 10) }
	switch p.verb {
	case 0:
		return append(dst, p.lit...)
	case 't':
		return appendText(dst, []byte(r.Topic), p.mod)
	case 'T':
		return num(int64(len(r.Topic)))
	case 'k':
		if h != nil {
			return appendText(dst, []byte(h.Key), p.mod)
		}
		return appendText(dst, r.Key, p.mod)
	case 'K':
		if h != nil {
			return num(int64(len(h.Key)))
		}
		return num(int64(len(r.Key)))
	case 'v':
		if h != nil {
			return appendText(dst, h.Value, p.mod)
		}
		return appendText(dst, r.Value, p.mod)
	case 'V':
		if h != nil {
			return num(int64(len(h.Value)))
		}
		return num(int64(len(r.Value)))
	case 'h':
		for i := range r.Headers {
			for _, in := range p.inner {
				dst = appendPiece(dst, in, r, n, &r.Headers[i])
			}
		}
		return dst
	case 'H':
		return num(int64(len(r.Headers)))
	case 'p':
		return num(int64(r.Partition))
	case 'o':
		return num(r.Offset)
	case 'e':
		return num(int64(r.LeaderEpoch))
	case 'd':
		return appendTime(dst, r.Timestamp, p.mod)
	case 'x':
		return num(r.ProducerID)
	case 'y':
		return num(int64(r.ProducerEpoch))
	case 'a':
		return num(int64(r.Attrs.TimestampType()))
	case 'i':
		return num(n)
	}
	return dst
}

func appendText(dst, b []byte, mod string) []byte {
	switch mod {
	case "hex":
		return hex.AppendEncode(dst, b)
	case "base64":
		return base64.StdEncoding.AppendEncode(dst, b)
	}
	return append(dst, b...)
}

func appendTime(dst []byte, ts time.Time, mod string) []byte {
	switch {
	case mod == "rfc3339":
		return ts.UTC().AppendFormat(dst, time.RFC3339Nano)
	case strings.HasPrefix(mod, "go["):
		return ts.UTC().AppendFormat(dst, mod[3:len(mod)-1])
	}
	return strconv.AppendInt(dst, ts.UnixMilli(), 10)
}
