package kit

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func envWith(vars map[string]string) Env {
	return Env{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}, Getenv: func(k string) string { return vars[k] }}
}

// TestResolvePrecedence: profile < STRAIT_BROKERS < --command-config < -X
// < --brokers, and the profile in use is --profile, else STRAIT_PROFILE,
// else the file's current one.
func TestResolvePrecedence(t *testing.T) {
	dir := t.TempDir()
	pfile := filepath.Join(dir, "profiles.yaml")
	pf := &Profiles{Path: pfile, Current: "dev", Profiles: map[string]map[string]string{
		"dev":  {"brokers": "dev:9092", "client.id": "from-dev"},
		"prod": {"brokers": "prod:9092"},
	}}
	if err := pf.Save(); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(pfile); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("profile file mode: %v %v", st, err)
	}
	props := filepath.Join(dir, "client.properties")
	if err := os.WriteFile(props, []byte("# comment\nbootstrap.servers=props:9092\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		vars map[string]string
		g    Globals
		want string
	}{
		{"current profile", nil, Globals{ConfigFile: pfile}, "dev:9092"},
		{"STRAIT_PROFILE", map[string]string{"STRAIT_PROFILE": "prod"}, Globals{ConfigFile: pfile}, "prod:9092"},
		{"--profile over STRAIT_PROFILE", map[string]string{"STRAIT_PROFILE": "dev"}, Globals{ConfigFile: pfile, Profile: "prod"}, "prod:9092"},
		{"STRAIT_BROKERS over the profile", map[string]string{"STRAIT_BROKERS": "env:9092"}, Globals{ConfigFile: pfile}, "env:9092"},
		{"--command-config over the environment", map[string]string{"STRAIT_BROKERS": "env:9092"}, Globals{ConfigFile: pfile, CommandConfig: props}, "props:9092"},
		{"-X over --command-config", nil, Globals{ConfigFile: pfile, CommandConfig: props, X: KeyValues{{"brokers", "x:9092"}}}, "x:9092"},
		{"--brokers over all", nil, Globals{ConfigFile: pfile, X: KeyValues{{"brokers", "x:9092"}}, Brokers: "flag:9092"}, "flag:9092"},
		{"no file: the default", nil, Globals{ConfigFile: filepath.Join(dir, "none.yaml")}, "127.0.0.1:9092"},
	} {
		conn, err := c.g.Resolve(envWith(c.vars))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := strings.Join(conn.Brokers, ","); got != c.want {
			t.Errorf("%s: brokers %s, want %s", c.name, got, c.want)
		}
	}
}

// TestResolveErrorsNameTheProblem: each bad setting is refused naming it.
func TestResolveErrorsNameTheProblem(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		g    Globals
		want string
	}{
		{Globals{X: KeyValues{{"bogus", "1"}}}, `unknown setting "bogus"`},
		{Globals{Brokers: "nohost"}, `"nohost" is not HOST:PORT`},
		{Globals{Brokers: "h:0"}, "the port is not a number"},
		{Globals{Profile: "ghost", ConfigFile: filepath.Join(dir, "p.yaml")}, `no profile "ghost"`},
		{Globals{X: KeyValues{{"tls.enabled", "maybe"}}}, "tls.enabled"},
		{Globals{X: KeyValues{{"tls.ca", filepath.Join(dir, "missing.pem")}}}, "ssl.truststore.location"},
		{Globals{X: KeyValues{{"security.protocol", "SASL_SSL"}}}, "sasl.jaas.config is missing"},
		{Globals{X: KeyValues{{"sasl.mechanism", "GSSAPI"}, {"user", "a"}, {"pass", "b"}}}, "GSSAPI"},
		{Globals{CommandConfig: filepath.Join(dir, "nope.properties")}, "--command-config"},
	} {
		_, err := c.g.Resolve(envWith(nil))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error containing %q", c.g, err, c.want)
		}
	}
}

// TestResolveSASLShortForms: user/pass with a mechanism make a SASL
// connection without TLS, SASL_SSL with tls.enabled.
func TestResolveSASLShortForms(t *testing.T) {
	for _, x := range []KeyValues{
		{{"sasl.mechanism", "SCRAM-SHA-512"}, {"user", "alice"}, {"pass", `p"w`}},
		{{"user", "alice"}, {"pass", "pw"}, {"tls.enabled", "true"}},
	} {
		conn, err := (&Globals{X: x}).Resolve(envWith(nil))
		if err != nil || len(conn.Opts) == 0 {
			t.Fatalf("%v: %v, %d options", x, err, len(conn.Opts))
		}
	}
}

// TestMainUsageErrors: one line naming the problem, then the synopsis,
// exit 2; --help exits 0 with the examples.
func TestMainUsageErrors(t *testing.T) {
	g := &Group{Name: "thing", Summary: "things", Commands: []*Command{{
		Name: "make", Args: "NAME", Summary: "makes a thing", MinArgs: 1, MaxArgs: 1,
		Examples: []string{"strait thing make x"},
		Flags: func(fs *flag.FlagSet) any {
			n := fs.Int("n", 1, "how many")
			return n
		},
		Run: func(ctx context.Context, c *Ctx, args []string, flags any) int { return ExitOK },
	}}}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"make"}, 2, "strait thing make: missing argument"},
		{[]string{"make", "a", "b"}, 2, `unexpected argument "b"`},
		{[]string{"make", "a", "-n", "x"}, 2, "invalid value"},
		{[]string{"make", "a", "--bogus"}, 2, "flag provided but not defined"},
		{[]string{"make", "a", "-X", "novalue"}, 2, "is not key=value"},
		{[]string{"unmake"}, 2, `unknown command "unmake"`},
		{[]string{}, 2, "missing command"},
		{[]string{"make", "a", "--timeout", "0s"}, 2, "--timeout must be positive"},
		{[]string{"make", "a", "--brokers", "h:1"}, 0, ""},
	} {
		env := envWith(nil)
		code := Main(context.Background(), g, c.args, env)
		stderr := env.Stderr.(*bytes.Buffer).String()
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, stderr, c.code, c.want)
		}
	}
	env := envWith(nil)
	if code := Main(context.Background(), g, []string{"make", "--help"}, env); code != 0 ||
		!strings.Contains(env.Stdout.(*bytes.Buffer).String(), "strait thing make x") {
		t.Fatalf("--help: exit %d\n%s", code, env.Stdout)
	}
}

// TestParseAtTime: one time form for every command.
func TestParseAtTime(t *testing.T) {
	for _, c := range []struct {
		in     string
		ms     int64
		ok     bool
		errHas string
	}{
		{"@1500", 1500, true, ""},
		{"@1970-01-01T00:00:02Z", 2000, true, ""},
		{"@2026-01-02T15:04:05.5+01:00", 1767362645500, true, ""},
		{"@-5", 0, true, "not negative"},
		{"@yesterday", 0, true, "after @ give unix milliseconds or an RFC 3339 time"},
		{"1500", 0, false, ""},
	} {
		ms, ok, err := ParseAtTime(c.in)
		if ms != c.ms || ok != c.ok || (c.errHas == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.errHas)) {
			t.Errorf("ParseAtTime(%q) = %d, %v, %v; want %d, %v, error containing %q", c.in, ms, ok, err, c.ms, c.ok, c.errHas)
		}
	}
}
