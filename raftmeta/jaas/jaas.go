// Package jaas parses the one-login-module JAAS configuration Kafka takes
// inline in sasl.jaas.config (Kafka's JaasConfig):
//
//	org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret";
//
// Both sides use it: the broker reads a listener's users from it
// (listener.name.<l>.<mechanism>.sasl.jaas.config) and its own inter-broker
// credentials, a mirror its source's credentials. Option values are
// secrets as often as not, so no error here ever quotes one.
//
// It lives with the metadata layer, the lowest that parses it (the
// controller checks a mirror's sasl.jaas.config), as a leaf with no
// dependency outside the standard library: the broker's listener config
// above imports it, and raftmeta does not import the wire layer (DESIGN.md
// §2).
package jaas

import (
	"errors"
	"fmt"
	"strings"
)

// Config is one login module entry.
type Config struct {
	// Module is the login module's class name.
	Module string
	// Flag is the control flag: required, requisite, sufficient or optional.
	Flag string
	// Options are the key=value options, values unquoted and unescaped.
	Options map[string]string
}

// ErrSyntax marks a value that is not "<LoginModule> <flag> key=value ... ;".
var ErrSyntax = errors.New(`expected '<LoginModule> required key="value" ... ;'`)

// Parse parses a sasl.jaas.config value holding exactly one login module,
// as Kafka requires of the inline form. Values may be quoted (with \" and
// \\ escapes) or bare words; an option given twice is an error.
func Parse(v string) (Config, error) {
	p := parser{s: v}
	var c Config
	if c.Module = p.word(); c.Module == "" {
		return c, fmt.Errorf("%w: no login module", ErrSyntax)
	}
	switch c.Flag = p.word(); c.Flag {
	case "required", "requisite", "sufficient", "optional":
	default:
		return c, fmt.Errorf("%w: login module %s has no control flag (required, requisite, sufficient or optional)", ErrSyntax, c.Module)
	}
	c.Options = map[string]string{}
	for {
		p.space()
		if p.eat(';') {
			break
		}
		key := p.word()
		if key == "" {
			return c, fmt.Errorf("%w: an option of %s has no name, or the entry does not end with ';'", ErrSyntax, c.Module)
		}
		p.space()
		if !p.eat('=') {
			return c, fmt.Errorf("%w: option %s has no '='", ErrSyntax, key)
		}
		val, ok := p.value()
		if !ok {
			return c, fmt.Errorf("%w: option %s has no value, or an unterminated quoted one", ErrSyntax, key)
		}
		if _, dup := c.Options[key]; dup {
			return c, fmt.Errorf("option %s given twice", key)
		}
		c.Options[key] = val
	}
	p.space()
	if p.i < len(p.s) {
		return c, fmt.Errorf("sasl.jaas.config must hold exactly one login module; found more after %s's ';'", c.Module)
	}
	return c, nil
}

type parser struct {
	s string
	i int
}

func (p *parser) space() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *parser) eat(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

// word reads a class name, flag, option name or bare value.
func (p *parser) word() string {
	p.space()
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c == ';' || c == '=' || c == '"' || strings.IndexByte(" \t\r\n", c) >= 0 {
			break
		}
		p.i++
	}
	return p.s[start:p.i]
}

func (p *parser) value() (string, bool) {
	p.space()
	if !p.eat('"') {
		w := p.word()
		return w, w != ""
	}
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch {
		case c == '"':
			return b.String(), true
		case c == '\\' && p.i < len(p.s):
			b.WriteByte(p.s[p.i])
			p.i++
		default:
			b.WriteByte(c)
		}
	}
	return "", false
}
