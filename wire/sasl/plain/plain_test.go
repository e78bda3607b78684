package plain

import (
	"errors"
	"strings"
	"testing"

	"github.com/strait-io/strait/raftmeta/jaas"
	"github.com/strait-io/strait/wire/sasl"
)

func TestPlain(t *testing.T) {
	jc, err := jaas.Parse(`org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="x" user_admin="admin-secret" user_alice="alice-secret";`)
	if err != nil {
		t.Fatal(err)
	}
	users, err := UsersFromJAAS(jc)
	if err != nil || len(users) != 2 || users["alice"] != "alice-secret" {
		t.Fatalf("users %v %v", users, err)
	}
	m := New(users)
	for _, tok := range []string{"\x00alice\x00alice-secret", "alice\x00alice\x00alice-secret"} {
		s := m.NewSession()
		reply, done, err := s.Step([]byte(tok))
		if err != nil || !done || len(reply) != 0 || s.Principal() != "User:alice" || !s.Expiry().IsZero() {
			t.Fatalf("%q: reply %q done %v err %v principal %s", tok, reply, done, err, s.Principal())
		}
		if _, _, err := s.Step([]byte(tok)); !errors.Is(err, sasl.ErrIllegalState) {
			t.Fatalf("a second message: %v", err)
		}
	}
	for tok, want := range map[string]string{
		"\x00alice\x00wrong":           "Invalid username or password",
		"\x00nobody\x00x":              "Invalid username or password",
		"\x00alice\x00alice-secre":     "Invalid username or password",
		"\x00\x00x":                    "username not specified",
		"\x00alice\x00":                "password not specified",
		"bob\x00alice\x00alice-secret": "authorization id that is different",
		"garbage":                      "expected 3 tokens, got 1",
		"a\x00b\x00c\x00d":             "expected 3 tokens, got 4",
	} {
		_, done, err := m.NewSession().Step([]byte(tok))
		if done || !errors.Is(err, sasl.ErrAuthenticationFailed) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: done %v err %v, want %q", tok, done, err, want)
		}
	}
	if _, err := UsersFromJAAS(jaas.Config{Module: "org.apache.kafka.common.security.scram.ScramLoginModule"}); err == nil {
		t.Fatal("a SCRAM login module gave PLAIN users")
	}
}
