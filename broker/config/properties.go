package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// Parse reads a Java properties file (java.util.Properties.load), the
// format of Kafka's server.properties:
//
//   - a natural line ends at \n, \r or \r\n; a line ending in an odd
//     number of backslashes continues on the next line, whose leading
//     whitespace is dropped;
//   - blank lines, and lines whose first non-blank character is # or !, are
//     skipped (a comment cannot be continued);
//   - the key runs from the first non-blank character to the first
//     unescaped '=', ':' or blank; blanks, then one '=' or ':', then blanks
//     separate it from the value, which is the rest of the line, trailing
//     blanks included ("key", "key=", "key value" and "key : value" all
//     work; blanks are space, tab and form feed);
//   - in keys and values \t \n \r \f are control characters, \uXXXX is a
//     UTF-16 code unit (surrogate pairs combine), and a backslash before
//     any other character yields that character ("\=" "\:" "\ " "\\");
//   - a later key replaces an earlier one.
//
// Java reads an InputStream as ISO-8859-1; Parse reads UTF-8 (dropping a
// leading byte order mark), so a file with non-ASCII values means what its
// author sees. A malformed \u escape is an error naming the line.
func Parse(r io.Reader) (map[string]string, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("config: reading properties: %w", err)
	}
	// Editors on Windows may start a UTF-8 file with a byte order mark;
	// Java would make it part of the first key.
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if !utf8.Valid(data) {
		return nil, errors.New("config: properties are not valid UTF-8")
	}
	lr := lineReader{in: []rune(string(data)), line: 1}
	props := map[string]string{}
	for {
		logical, lineNo, ok := lr.next()
		if !ok {
			return props, nil
		}
		key, value, err := splitKeyValue(logical)
		if err != nil {
			return nil, fmt.Errorf("config: properties line %d: %w", lineNo, err)
		}
		props[key] = value
	}
}

func isBlank(c rune) bool { return c == ' ' || c == '\t' || c == '\f' }

// lineReader yields logical lines, as Java's Properties.LineReader: comments
// and blank lines skipped, continuations joined with the line-ending
// backslash removed, escapes left in place.
type lineReader struct {
	in   []rune
	pos  int
	line int // natural line number of in[pos]
}

// next returns the next logical line and the natural line it starts on.
func (lr *lineReader) next() (logical []rune, startLine int, ok bool) {
	var (
		buf               []rune
		skipBlank         = true  // at the start of a natural line
		continuationBegin = false // at the start of a continuation line
		comment           = false
		backslash         = false // buf ends in an odd run of backslashes
	)
	for lr.pos < len(lr.in) {
		c := lr.in[lr.pos]
		lr.pos++
		eol := c == '\n' || c == '\r'
		if eol {
			// \r\n is one line ending.
			if c == '\r' && lr.pos < len(lr.in) && lr.in[lr.pos] == '\n' {
				lr.pos++
			}
			lr.line++
		}
		if skipBlank {
			if isBlank(c) {
				continue
			}
			if eol && !continuationBegin {
				continue // blank line
			}
			skipBlank, continuationBegin = false, false
		}
		// As in Java, a line is a comment when # or ! is the first character
		// of the logical line so far — even after a continuation that left
		// it empty.
		if len(buf) == 0 && !comment && !eol && (c == '#' || c == '!') {
			comment = true
		}
		if comment {
			if eol {
				comment, skipBlank = false, true
			}
			continue
		}
		if !eol {
			if len(buf) == 0 {
				startLine = lr.line
			}
			buf = append(buf, c)
			backslash = c == '\\' && !backslash
			continue
		}
		if len(buf) == 0 {
			skipBlank = true
			continue
		}
		if backslash {
			buf = buf[:len(buf)-1] // the continuation backslash
			skipBlank, continuationBegin, backslash = true, true, false
			continue
		}
		return buf, startLine, true
	}
	if len(buf) == 0 || comment {
		return nil, 0, false
	}
	if backslash { // a backslash ending the input is dropped
		buf = buf[:len(buf)-1]
	}
	return buf, startLine, true
}

// splitKeyValue splits a logical line into its unescaped key and value
// (Properties.load0).
func splitKeyValue(line []rune) (string, string, error) {
	keyLen, valueStart := 0, len(line)
	hasSep, backslash := false, false
	for keyLen < len(line) {
		c := line[keyLen]
		if (c == '=' || c == ':') && !backslash {
			valueStart, hasSep = keyLen+1, true
			break
		}
		if isBlank(c) && !backslash {
			valueStart = keyLen + 1
			break
		}
		backslash = c == '\\' && !backslash
		keyLen++
	}
	for valueStart < len(line) {
		c := line[valueStart]
		if !isBlank(c) {
			if hasSep || (c != '=' && c != ':') {
				break
			}
			hasSep = true
		}
		valueStart++
	}
	key, err := unescape(line[:keyLen])
	if err != nil {
		return "", "", err
	}
	value, err := unescape(line[valueStart:])
	if err != nil {
		return "", "", err
	}
	return key, value, nil
}

// unescape is Properties.loadConvert.
func unescape(in []rune) (string, error) {
	out := make([]rune, 0, len(in))
	var units []uint16 // pending UTF-16 from \u escapes
	flush := func() {
		if len(units) > 0 {
			out = append(out, decodeUTF16(units)...)
			units = units[:0]
		}
	}
	for i := 0; i < len(in); i++ {
		c := in[i]
		if c != '\\' || i == len(in)-1 {
			flush()
			out = append(out, c)
			continue
		}
		i++
		c = in[i]
		if c == 'u' {
			if i+4 >= len(in) {
				return "", errors.New(`malformed \uxxxx encoding`)
			}
			n, err := strconv.ParseUint(string(in[i+1:i+5]), 16, 16)
			if err != nil {
				return "", errors.New(`malformed \uxxxx encoding`)
			}
			units = append(units, uint16(n))
			i += 4
			continue
		}
		flush()
		switch c {
		case 't':
			c = '\t'
		case 'r':
			c = '\r'
		case 'n':
			c = '\n'
		case 'f':
			c = '\f'
		}
		out = append(out, c)
	}
	flush()
	return string(out), nil
}

// decodeUTF16 combines surrogate pairs; a lone surrogate becomes U+FFFD.
func decodeUTF16(units []uint16) []rune {
	out := make([]rune, 0, len(units))
	for i := 0; i < len(units); i++ {
		u := rune(units[i])
		if u >= 0xD800 && u < 0xDC00 && i+1 < len(units) {
			if l := rune(units[i+1]); l >= 0xDC00 && l < 0xE000 {
				out = append(out, 0x10000+(u-0xD800)<<10+(l-0xDC00))
				i++
				continue
			}
		}
		if u >= 0xD800 && u < 0xE000 {
			u = utf8.RuneError
		}
		out = append(out, u)
	}
	return out
}
