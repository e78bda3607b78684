package jaas

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	c, err := Parse(` org.apache.kafka.common.security.plain.PlainLoginModule required
		username="admin" password = "p\"w\\d;=" user_alice=alice-secret ;  `)
	if err != nil {
		t.Fatal(err)
	}
	if c.Module != "org.apache.kafka.common.security.plain.PlainLoginModule" || c.Flag != "required" ||
		len(c.Options) != 3 || c.Options["username"] != "admin" || c.Options["password"] != `p"w\d;=` || c.Options["user_alice"] != "alice-secret" {
		t.Fatalf("%+v", c)
	}
	for _, tc := range []struct{ in, want string }{
		{``, "no login module"},
		{`M;`, "no control flag"},
		{`M maybe a="b";`, "no control flag"},
		{`M required a="b"`, "does not end with ';'"},
		{`M required a "b";`, "option a has no '='"},
		{`M required a=;`, "option a has no value"},
		{`M required a="secret-x;`, "unterminated"},
		{`M required a="x" a="y";`, "option a given twice"},
		{`M required; N required;`, "exactly one login module"},
	} {
		_, err := Parse(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one containing %q", tc.in, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("%q: the error shows a value: %v", tc.in, err)
		}
	}
}
