package epoch

import (
	"fmt"
	"strconv"
	"strings"
)

// checkpointVersion is LeaderEpochCheckpointFile.CURRENT_VERSION.
const checkpointVersion = 0

// encodeCheckpoint renders entries in the format of Kafka's CheckpointFile
// with LeaderEpochCheckpointFile's formatter:
//
//	0                  version
//	2                  number of entries
//	0 1                "<epoch> <startOffset>", one entry per line
//	1 2
//
// Every line, the last included, ends in "\n" (Kafka writes through a
// BufferedWriter with newLine() on Unix).
func encodeCheckpoint(entries []Entry) []byte {
	b := make([]byte, 0, 8+len(entries)*16)
	b = strconv.AppendInt(b, checkpointVersion, 10)
	b = append(b, '\n')
	b = strconv.AppendInt(b, int64(len(entries)), 10)
	b = append(b, '\n')
	for _, e := range entries {
		b = strconv.AppendInt(b, int64(e.Epoch), 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, e.StartOffset, 10)
		b = append(b, '\n')
	}
	return b
}

// decodeCheckpoint parses a checkpoint file the way Kafka's
// CheckpointReadBuffer does: an empty file, or one holding only the version
// line, is an empty list (Kafka creates the file empty before its first
// write); otherwise the version must be 0, every following line must be two
// whitespace-separated numbers, and their count must match line 2.
// Validation of the entries themselves is left to the caller.
//
// name is the file's path, used in error messages; lineNos[i] is the line
// number of entries[i].
func decodeCheckpoint(name string, data []byte) (entries []Entry, lineNos []int, err error) {
	lines := splitLines(data)
	malformed := func(n int, why string) error {
		return fmt.Errorf("%w: %s line %d: %s: %q", ErrMalformedCheckpoint, name, n, why, lines[n-1])
	}
	if len(lines) == 0 {
		return nil, nil, nil
	}
	version, err := strconv.ParseInt(lines[0], 10, 32)
	if err != nil {
		return nil, nil, malformed(1, "malformed line")
	}
	if version != checkpointVersion {
		return nil, nil, malformed(1, fmt.Sprintf("unrecognised version %d, expected %d", version, checkpointVersion))
	}
	if len(lines) == 1 {
		return nil, nil, nil
	}
	expected, err := strconv.ParseInt(lines[1], 10, 32)
	if err != nil {
		return nil, nil, malformed(2, "malformed line")
	}
	if expected < 0 {
		return nil, nil, malformed(2, "negative entry count")
	}
	for i := 2; i < len(lines); i++ {
		e, ok := parseEntry(lines[i])
		if !ok {
			return nil, nil, malformed(i+1, "malformed line")
		}
		entries = append(entries, e)
		lineNos = append(lineNos, i+1)
	}
	if int64(len(entries)) != expected {
		return nil, nil, fmt.Errorf("%w: %s line 2: expected %d entries but found %d",
			ErrMalformedCheckpoint, name, expected, len(entries))
	}
	return entries, lineNos, nil
}

// parseEntry parses "<epoch> <startOffset>". Kafka splits the line on the
// regex \s+, which keeps a leading empty field and drops trailing ones, and
// accepts exactly two fields: so leading whitespace is an error and trailing
// whitespace is not. Numbers that do not parse (or overflow int32/int64)
// are errors too.
func parseEntry(line string) (Entry, bool) {
	line = strings.TrimRightFunc(line, isJavaSpace)
	if line == "" || isJavaSpace(rune(line[0])) {
		return Entry{}, false
	}
	fields := strings.FieldsFunc(line, isJavaSpace)
	if len(fields) != 2 {
		return Entry{}, false
	}
	epoch, err := strconv.ParseInt(fields[0], 10, 32)
	if err != nil {
		return Entry{}, false
	}
	offset, err := strconv.ParseInt(fields[1], 10, 64)
	if err != nil {
		return Entry{}, false
	}
	return Entry{Epoch: int32(epoch), StartOffset: offset}, true
}

// isJavaSpace is the \s character class of java.util.regex.
func isJavaSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return true
	}
	return false
}

// splitLines splits data as repeated BufferedReader.readLine calls would:
// lines end at "\n", "\r" or "\r\n", and a last line without a terminator
// still counts.
func splitLines(data []byte) []string {
	var lines []string
	start := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '\n':
			lines = append(lines, string(data[start:i]))
			start = i + 1
		case '\r':
			lines = append(lines, string(data[start:i]))
			if i+1 < len(data) && data[i+1] == '\n' {
				i++
			}
			start = i + 1
		}
	}
	if start < len(data) {
		lines = append(lines, string(data[start:]))
	}
	return lines
}
