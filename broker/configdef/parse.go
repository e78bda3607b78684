package configdef

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// commaWithWhitespace is Kafka's ConfigDef.COMMA_WITH_WHITESPACE.
var commaWithWhitespace = regexp.MustCompile(`\s*,\s*`)

// parseType parses raw as a value of type t and returns its canonical form,
// or the reason it is not one (the text Kafka's ConfigDef.parseType puts in
// its ConfigException).
func parseType(t Type, raw string) (canonical, reason string) {
	trimmed := strings.TrimSpace(raw)
	switch t {
	case Boolean:
		switch strings.ToLower(trimmed) {
		case "true":
			return "true", ""
		case "false":
			return "false", ""
		}
		return "", "Expected value to be either true or false"
	case Int, Short, Long:
		bits := map[Type]int{Int: 32, Short: 16, Long: 64}[t]
		n, err := strconv.ParseInt(trimmed, 10, bits)
		if err != nil {
			return "", "Not a number of type " + strings.ToUpper(t.String())
		}
		return strconv.FormatInt(n, 10), ""
	case Double:
		f, err := parseJavaDouble(trimmed)
		if err != nil {
			return "", "Not a number of type DOUBLE"
		}
		return formatJavaDouble(f), ""
	case List:
		return strings.Join(SplitList(trimmed), ","), ""
	case String, Class, Password, Unknown:
		return trimmed, ""
	}
	return "", "unknown type"
}

// SplitList splits a LIST value as Kafka does: an empty (or blank) value is
// the empty list; otherwise split on commas, trimming whitespace around
// them, keeping empty elements (they fail the validators that check
// elements).
func SplitList(v string) []string {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil
	}
	return commaWithWhitespace.Split(v, -1)
}

// parseJavaDouble accepts what Java's Double.parseDouble accepts for the
// values people write: decimals, exponents, an optional f/d suffix.
func parseJavaDouble(s string) (float64, error) {
	if n := len(s); n > 1 && strings.ContainsRune("fFdD", rune(s[n-1])) {
		s = s[:n-1]
	}
	if strings.ContainsAny(s, "_xXpP") { // Go-only syntaxes
		return 0, errors.New("not a Java double")
	}
	return strconv.ParseFloat(s, 64)
}

// formatJavaDouble prints f as Java's Double.toString does, so a described
// value reads as Kafka's: 0.5 → "0.5", 1 → "1.0", 1e-5 → "1.0E-5".
func formatJavaDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	if a := math.Abs(f); a == 0 || (a >= 1e-3 && a < 1e7) {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'E', -1, 64) // 1E-05, 1.5E+07
	mant, exp, _ := strings.Cut(s, "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}

// atLeast is Kafka's ConfigDef.Range.atLeast for integer types.
func atLeast(min int64) func(string) error {
	return func(v string) error {
		n, _ := strconv.ParseInt(v, 10, 64)
		if n < min {
			return fmt.Errorf("Value must be at least %d", min)
		}
		return nil
	}
}

// between is Kafka's ConfigDef.Range.between for integer types.
func between(min, max int64) func(string) error {
	return func(v string) error {
		n, _ := strconv.ParseInt(v, 10, 64)
		if n < min {
			return fmt.Errorf("Value must be at least %d", min)
		}
		if n > max {
			return fmt.Errorf("Value must be no more than %d", max)
		}
		return nil
	}
}

// betweenDouble is Kafka's ConfigDef.Range.between for DOUBLE keys, whose
// bounds Java prints as given (between(0, 1) prints 0 and 1).
func betweenDouble(min, max float64) func(string) error {
	return func(v string) error {
		f, _ := strconv.ParseFloat(v, 64)
		if f < min {
			return fmt.Errorf("Value must be at least %s", strconv.FormatFloat(min, 'f', -1, 64))
		}
		if f > max {
			return fmt.Errorf("Value must be no more than %s", strconv.FormatFloat(max, 'f', -1, 64))
		}
		return nil
	}
}

// in is Kafka's ConfigDef.ValidString.in: case-sensitive.
func in(valid ...string) func(string) error {
	return func(v string) error {
		for _, s := range valid {
			if v == s {
				return nil
			}
		}
		return fmt.Errorf("String must be one of: %s", strings.Join(valid, ", "))
	}
}

// inIgnoreCase is Kafka's ConfigDef.CaseInsensitiveValidString.in.
func inIgnoreCase(valid ...string) func(string) error {
	return func(v string) error {
		for _, s := range valid {
			if strings.EqualFold(v, s) {
				return nil
			}
		}
		return fmt.Errorf("String must be one of (case insensitive): %s", strings.Join(valid, ", "))
	}
}

// validList is Kafka's ConfigDef.ValidList.in: every element must be one of
// valid. nonEmpty additionally rejects the empty list (see cleanup.policy).
func validList(nonEmpty bool, valid ...string) func(string) error {
	one := in(valid...)
	return func(v string) error {
		elems := SplitList(v)
		if nonEmpty && len(elems) == 0 {
			return errors.New("Value must not be empty")
		}
		for _, e := range elems {
			if err := one(e); err != nil {
				return err
			}
		}
		return nil
	}
}

// gzipLevel is CompressionType.GZIP.levelValidator: 1..9 or -1 (the JDK's
// Deflater.DEFAULT_COMPRESSION).
func gzipLevel(v string) error {
	n, _ := strconv.Atoi(v)
	if n > 9 || (n < 1 && n != -1) {
		return errors.New("Value must be between 1 and 9 or equal to -1")
	}
	return nil
}

// throttledReplicas is Kafka's ThrottledReplicaListValidator: "*" or a list
// of partitionId:brokerId pairs.
var throttledPair = regexp.MustCompile(`^([0-9]+:[0-9]+)?$`)

func throttledReplicas(name string) func(string) error {
	return func(v string) error {
		elems := SplitList(v)
		if strings.Join(elems, "") == "*" {
			return nil
		}
		for _, e := range elems {
			if !throttledPair.MatchString(strings.TrimSpace(e)) {
				return fmt.Errorf("%s must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...", name)
			}
		}
		return nil
	}
}

// all runs validators in order.
func all(vs ...func(string) error) func(string) error {
	return func(v string) error {
		for _, f := range vs {
			if err := f(v); err != nil {
				return err
			}
		}
		return nil
	}
}

// clusterIDValue accepts what Kafka's Uuid.fromString accepts: 16 bytes in
// unpadded base64url (22 characters).
func clusterIDValue(v string) error {
	if v == "" {
		return nil
	}
	b, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil || len(b) != 16 {
		return fmt.Errorf("%q is not a base64url-encoded 16-byte UUID (22 characters, as kafka-storage.sh random-uuid prints)", v)
	}
	return nil
}
