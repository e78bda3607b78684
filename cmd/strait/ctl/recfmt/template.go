// Package recfmt is the record template language of `strait produce` and
// `strait consume` (issue 28), rpk's: backslash escapes (\t \n \r \\ \xNN),
// percent verbs (%t topic, %k key, %v value, %h{...} headers, %p
// partition, %o offset, %d timestamp, ...) with brace modifiers (%v{hex}).
// One parsed template both prints records (consume) and reads them from
// input (produce), so a consumer's output pipes into a producer with the
// same --format.
package recfmt

import (
	"fmt"
	"strconv"
	"strings"
)

// piece is one element of a template: literal text, or a verb with its
// modifier (and, for %h, the per-header template inside its braces).
type piece struct {
	lit   []byte
	verb  byte // 0 for literal text
	mod   string
	inner []piece // %h{...}
}

// Template is a parsed --format.
type Template struct {
	pieces []piece
}

// verbs are the percent verbs rpk's formats know (rpk topic consume
// --help): the ones a record has, its lengths and the partition's marks.
const verbs = "tTkKvVhHpoedxyai"

// Parse parses a template. An error names the problem and its position.
func Parse(s string) (*Template, error) {
	ps, rest, err := parse(s, false)
	if err != nil {
		return nil, err
	}
	if rest != "" {
		return nil, fmt.Errorf("format: unexpected %q", rest)
	}
	return &Template{pieces: ps}, nil
}

// parse reads pieces until the end of s or, inside %h{...}, until its
// closing brace, returning what follows it.
func parse(s string, inHeader bool) ([]piece, string, error) {
	var ps []piece
	var lit []byte
	flush := func() {
		if len(lit) > 0 {
			ps = append(ps, piece{lit: lit})
			lit = nil
		}
	}
	for len(s) > 0 {
		c := s[0]
		switch {
		case c == '}' && inHeader:
			flush()
			return ps, s[1:], nil
		case c == '\\':
			if len(s) < 2 {
				return nil, "", fmt.Errorf("format: a trailing backslash")
			}
			switch s[1] {
			case 't':
				lit = append(lit, '\t')
			case 'n':
				lit = append(lit, '\n')
			case 'r':
				lit = append(lit, '\r')
			case '\\':
				lit = append(lit, '\\')
			case 'x':
				if len(s) < 4 {
					return nil, "", fmt.Errorf("format: \\x wants two hex digits")
				}
				b, err := strconv.ParseUint(s[2:4], 16, 8)
				if err != nil {
					return nil, "", fmt.Errorf("format: \\x%s is not two hex digits", s[2:4])
				}
				lit = append(lit, byte(b))
				s = s[2:]
			default:
				return nil, "", fmt.Errorf("format: unknown escape \\%c", s[1])
			}
			s = s[2:]
		case c == '%':
			if len(s) < 2 {
				return nil, "", fmt.Errorf("format: a trailing %%")
			}
			v := s[1]
			s = s[2:]
			switch {
			case v == '%' || v == '{' || v == '}':
				lit = append(lit, v)
				continue
			case !strings.ContainsRune(verbs, rune(v)):
				return nil, "", fmt.Errorf("format: unknown verb %%%c", v)
			}
			flush()
			p := piece{verb: v}
			if v == 'h' {
				if inHeader {
					return nil, "", fmt.Errorf("format: %%h inside %%h{...}")
				}
				if !strings.HasPrefix(s, "{") {
					return nil, "", fmt.Errorf("format: %%h wants the header template in braces, as %%h{%%k=%%v;}")
				}
				inner, rest, err := parse(s[1:], true)
				if err != nil {
					return nil, "", err
				}
				p.inner, s = inner, rest
			} else if strings.HasPrefix(s, "{") {
				end := strings.IndexByte(s, '}')
				if end < 0 {
					return nil, "", fmt.Errorf("format: %%%c{ without its closing brace", v)
				}
				p.mod, s = s[1:end], s[end+1:]
				if err := checkMod(v, p.mod); err != nil {
					return nil, "", err
				}
			}
			ps = append(ps, p)
		default:
			lit = append(lit, c)
			s = s[1:]
		}
	}
	if inHeader {
		return nil, "", fmt.Errorf("format: %%h{ without its closing brace")
	}
	flush()
	return ps, "", nil
}

// checkMod accepts the modifiers this implementation knows: text in hex or
// base64 (as rpk's %v{hex}), and a timestamp as milliseconds (the
// default), RFC 3339 or a Go layout (%d{go[2006-01-02]}).
func checkMod(v byte, mod string) error {
	switch v {
	case 't', 'k', 'v':
		if mod == "hex" || mod == "base64" || mod == "" {
			return nil
		}
	case 'd':
		if mod == "" || mod == "unix" || mod == "rfc3339" || strings.HasPrefix(mod, "go[") && strings.HasSuffix(mod, "]") {
			return nil
		}
	}
	return fmt.Errorf("format: unknown modifier %%%c{%s}", v, mod)
}

// Has reports whether the template uses verb v (outside headers).
func (t *Template) Has(v byte) bool {
	for _, p := range t.pieces {
		if p.verb == v {
			return true
		}
	}
	return false
}
