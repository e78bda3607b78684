package scram

import (
	"encoding/base64"
	"errors"
	"strings"
	"unicode/utf8"
)

// The client's messages of RFC 5802 section 7, parsed as Kafka's
// ScramMessages does.

// clientFirst is client-first-message: gs2-header client-first-message-bare.
type clientFirst struct {
	gs2Header string // "n,," or "n,a=<authzid>,"
	authzid   string // decoded; "" when absent
	user      string // decoded saslname
	nonce     string // c-nonce
	bare      string // client-first-message-bare, for the AuthMessage
	// extensions are the attributes after the nonce (Kafka's
	// ScramExtensions, e.g. tokenauth=true).
	extensions map[string]string
}

var (
	errChannelBinding = errors.New("channel binding is not supported")
	errMalformed      = errors.New("invalid SCRAM message format")
)

func parseClientFirst(msg string) (*clientFirst, error) {
	// gs2-cbind-flag: "p=" asks for channel binding, "y" says the client
	// could bind but believes the server cannot. Kafka's regex accepts
	// "n" only; so does Strait.
	if strings.HasPrefix(msg, "p=") || strings.HasPrefix(msg, "y,") {
		return nil, errChannelBinding
	}
	rest, ok := strings.CutPrefix(msg, "n,")
	if !ok {
		return nil, errMalformed
	}
	m := &clientFirst{}
	az, bare, ok := strings.Cut(rest, ",")
	if !ok {
		return nil, errMalformed
	}
	if az != "" {
		name, ok := strings.CutPrefix(az, "a=")
		if !ok {
			return nil, errMalformed
		}
		if m.authzid, ok = decodeSaslName(name); !ok {
			return nil, errMalformed
		}
	}
	m.gs2Header = "n," + az + ","
	m.bare = bare
	attrs := strings.Split(bare, ",")
	// A reserved "m=" extension must fail the exchange (RFC 5802 section
	// 5.1): it would change the meaning of what follows.
	if len(attrs) < 2 {
		return nil, errMalformed
	}
	name, ok := strings.CutPrefix(attrs[0], "n=")
	if !ok {
		return nil, errMalformed
	}
	if m.user, ok = decodeSaslName(name); !ok {
		return nil, errMalformed
	}
	nonce, ok := strings.CutPrefix(attrs[1], "r=")
	if !ok || !printable(nonce) {
		return nil, errMalformed
	}
	m.nonce = nonce
	for _, a := range attrs[2:] {
		k, v, ok := strings.Cut(a, "=")
		if !ok || !alpha(k) || v == "" {
			return nil, errMalformed
		}
		if m.extensions == nil {
			m.extensions = map[string]string{}
		}
		m.extensions[k] = v
	}
	return m, nil
}

// clientFinal is client-final-message.
type clientFinal struct {
	channelBinding string // c=, base64 as sent
	nonce          string // c-nonce s-nonce
	proof          []byte
	withoutProof   string // client-final-message-without-proof
}

func parseClientFinal(msg string) (*clientFinal, error) {
	i := strings.LastIndex(msg, ",p=")
	if i < 0 {
		return nil, errMalformed
	}
	m := &clientFinal{withoutProof: msg[:i]}
	proof, err := base64.StdEncoding.DecodeString(msg[i+len(",p="):])
	if err != nil || len(proof) == 0 {
		return nil, errMalformed
	}
	m.proof = proof
	attrs := strings.Split(m.withoutProof, ",")
	if len(attrs) < 2 {
		return nil, errMalformed
	}
	cb, ok := strings.CutPrefix(attrs[0], "c=")
	if !ok || cb == "" {
		return nil, errMalformed
	}
	nonce, ok := strings.CutPrefix(attrs[1], "r=")
	if !ok || !printable(nonce) {
		return nil, errMalformed
	}
	for _, a := range attrs[2:] {
		if k, v, ok := strings.Cut(a, "="); !ok || !alpha(k) || v == "" {
			return nil, errMalformed
		}
	}
	m.channelBinding, m.nonce = cb, nonce
	return m, nil
}

// decodeSaslName undoes RFC 5802's saslname escaping: "=2C" is ',' and
// "=3D" is '='; any other '=' is an error, as are an empty name, NUL and
// invalid UTF-8.
func decodeSaslName(s string) (string, bool) {
	if s == "" || !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '=' {
			b.WriteByte(s[i])
			continue
		}
		switch {
		case strings.HasPrefix(s[i:], "=2C"):
			b.WriteByte(',')
		case strings.HasPrefix(s[i:], "=3D"):
			b.WriteByte('=')
		default:
			return "", false
		}
		i += 2
	}
	return b.String(), true
}

// printable is RFC 5802's printable: %x21-7E except ','; at least one.
func printable(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e || c == ',' {
			return false
		}
	}
	return true
}

func alpha(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}
