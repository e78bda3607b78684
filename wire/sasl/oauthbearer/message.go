package oauthbearer

import (
	"errors"
	"fmt"
	"strings"
)

// initialResponse is the client's first message (RFC 7628 section 3.1):
//
//	n,[a=<authzid>],\x01auth=Bearer <token>\x01[key=value\x01]...\x01
type initialResponse struct {
	authzid    string            // decoded; empty when the client gave none
	token      string            // the bearer token, as sent
	extensions map[string]string // every key but auth
}

const kvSep = '\x01'

// errMalformed marks a client first message that does not parse. Kafka's
// OAuthBearerClientInitialResponse throws a SaslException for it, which its
// authenticator answers with SASL_AUTHENTICATION_FAILED.
var errMalformed = errors.New("invalid OAUTHBEARER client first message")

// parseInitialResponse parses msg as Kafka's
// OAuthBearerClientInitialResponse does: the GS2 header must be "n" (no
// channel binding) with an optional authzid, keys are letters only, values
// printable ASCII (with space, tab, CR, LF), auth is required and its
// scheme is Bearer (any case). A key given twice is refused (Kafka keeps
// the last; no client sends two).
func parseInitialResponse(msg []byte) (initialResponse, error) {
	var r initialResponse
	s := string(msg)
	rest, ok := strings.CutPrefix(s, "n,")
	if !ok {
		return r, fmt.Errorf("%w: the GS2 header must start with \"n,\"", errMalformed)
	}
	header, rest, ok := strings.Cut(rest, ",")
	if !ok {
		return r, fmt.Errorf("%w: the GS2 header does not end with ','", errMalformed)
	}
	if header != "" {
		zid, ok := strings.CutPrefix(header, "a=")
		if !ok {
			return r, fmt.Errorf("%w: the GS2 header holds something other than a=<authzid>", errMalformed)
		}
		dec, err := decodeSaslname(zid)
		if err != nil {
			return r, fmt.Errorf("%w: authzid: %v", errMalformed, err)
		}
		r.authzid = dec
	}
	// What follows is \x01 (key=value\x01)* \x01.
	if len(rest) < 2 || rest[0] != kvSep || rest[len(rest)-1] != kvSep {
		return r, fmt.Errorf("%w: the key=value pairs must be framed by \\x01", errMalformed)
	}
	pairs := rest[1 : len(rest)-1]
	kv := map[string]string{}
	for pairs != "" {
		pair, tail, ok := strings.Cut(pairs, string(kvSep))
		if !ok {
			return r, fmt.Errorf("%w: a key=value pair does not end with \\x01", errMalformed)
		}
		pairs = tail
		key, val, ok := strings.Cut(pair, "=")
		if !ok || !isExtensionKey(key) || !isExtensionValue(val) {
			return r, fmt.Errorf("%w: a key=value pair is not letters=printable text", errMalformed)
		}
		if _, dup := kv[key]; dup {
			return r, fmt.Errorf("%w: key %s given twice", errMalformed, key)
		}
		kv[key] = val
	}
	auth, ok := kv["auth"]
	if !ok {
		return r, fmt.Errorf("%w: 'auth' not specified", errMalformed)
	}
	delete(kv, "auth")
	token, err := parseAuth(auth)
	if err != nil {
		return r, err
	}
	r.token = token
	r.extensions = kv
	return r, nil
}

// parseAuth takes "Bearer <b64token>" (RFC 6750 section 2.1, as Kafka's
// AUTH_PATTERN: a word, spaces, then the token characters with trailing
// '=' padding).
func parseAuth(auth string) (string, error) {
	i := strings.IndexByte(auth, ' ')
	if i <= 0 {
		return "", fmt.Errorf("%w: invalid 'auth' format", errMalformed)
	}
	scheme, token := auth[:i], strings.TrimLeft(auth[i:], " ")
	for _, c := range scheme {
		if !isWordChar(c) {
			return "", fmt.Errorf("%w: invalid 'auth' format", errMalformed)
		}
	}
	if !isB64Token(token) {
		return "", fmt.Errorf("%w: invalid 'auth' format", errMalformed)
	}
	if !strings.EqualFold(scheme, "bearer") {
		return "", fmt.Errorf("%w: invalid scheme %q", errMalformed, scheme)
	}
	return token, nil
}

// decodeSaslname undoes RFC 5801's escapes of ',' (=2C) and '=' (=3D); any
// other '=' or a ',' is malformed, as is a character outside \x01-\x7F.
func decodeSaslname(s string) (string, error) {
	if s == "" {
		return "", errors.New("empty")
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '=':
			switch s[i+1 : min(i+3, len(s))] {
			case "2C":
				b.WriteByte(',')
			case "3D":
				b.WriteByte('=')
			default:
				return "", errors.New("'=' is not followed by 2C or 3D")
			}
			i += 2
		case c == 0 || c == ',' || c > 0x7f:
			return "", fmt.Errorf("character %#x is not allowed", c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

func isExtensionKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

func isExtensionValue(v string) bool {
	if v == "" {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(0x21 <= c && c <= 0x7e || c == ' ' || c == '\t' || c == '\r' || c == '\n') {
			return false
		}
	}
	return true
}

func isWordChar(c rune) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// isB64Token is RFC 6750's b64token: 1*( ALPHA / DIGIT / "-" / "." / "_" /
// "~" / "+" / "/" ) *"=".
func isB64Token(t string) bool {
	body := strings.TrimRight(t, "=")
	if body == "" {
		return false
	}
	for _, c := range body {
		if !isWordChar(c) && !strings.ContainsRune("-.~+/", c) {
			return false
		}
	}
	return true
}

// errorReply is the server's error message of RFC 7628 section 3.2.2, as
// Kafka's OAuthBearerSaslServer writes it for a token its validator
// refused (status invalid_token, no scope, no openid-configuration).
func errorReply(status string) []byte {
	return fmt.Appendf(nil, `{"status":%q}`, status)
}
