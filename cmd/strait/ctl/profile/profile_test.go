package profile_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/strait-io/strait/cmd/strait/ctl/ctltest"
	"github.com/strait-io/strait/cmd/strait/ctl/kit"
)

func TestMain(m *testing.M) { os.Exit(ctltest.Main(m)) }

// home is a profile file's environment: XDG_CONFIG_HOME in a temporary
// directory (later entries of RunEnv's environment win).
type home struct {
	t    *testing.T
	dir  string
	file string
}

func newHome(t *testing.T) home {
	dir := t.TempDir()
	return home{t: t, dir: dir, file: filepath.Join(dir, "strait", "profiles.yaml")}
}

func (h home) run(args ...string) ctltest.Result {
	h.t.Helper()
	return ctltest.RunEnv(h.t, []string{"XDG_CONFIG_HOME=" + h.dir}, "", args...)
}

func (h home) must(args ...string) ctltest.Result {
	h.t.Helper()
	r := h.run(args...)
	if r.Code != 0 {
		h.t.Fatalf("%s", r)
	}
	return r
}

// fails expects exit code and a single stderr line (then, for usage
// errors, the synopsis) starting "strait profile ..." and containing want.
func (h home) fails(code int, want string, args ...string) {
	h.t.Helper()
	r := h.run(args...)
	first, _, _ := strings.Cut(r.Stderr, "\n")
	if r.Code != code || r.Stdout != "" || !strings.HasPrefix(first, "strait profile ") || !strings.Contains(first, want) {
		h.t.Fatalf("want exit %d and %q on the first line of stderr\n%s", code, want, r)
	}
	if code == kit.ExitFailed && strings.Count(r.Stderr, "\n") != 1 {
		h.t.Fatalf("want one line on stderr\n%s", r)
	}
}

func (h home) load() *kit.Profiles {
	h.t.Helper()
	pf, err := kit.LoadProfiles(h.file)
	if err != nil {
		h.t.Fatal(err)
	}
	return pf
}

// TestProfileLifecycle: create (the file 0600, its directory 0700, the
// first profile current), list with the current one marked, show with
// passwords masked unless --show-secrets, use, set (key= removes), delete,
// each in table and --json, through the binary.
func TestProfileLifecycle(t *testing.T) {
	h := newHome(t)
	if r := h.must("profile", "list"); r.Stdout != "NAME  BROKERS\n" {
		t.Fatalf("empty list: %s", r)
	}
	if r := h.must("profile", "list", "--json"); r.Stdout != "[]\n" {
		t.Fatalf("empty list --json: %s", r)
	}

	r := h.must("profile", "create", "local", "--brokers", "127.0.0.1:9092")
	if want := `created profile "local" in ` + h.file + " (current)\n"; r.Stdout != want {
		t.Fatalf("create: %q, want %q", r.Stdout, want)
	}
	st, err := os.Stat(h.file)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("profile file: %v, %v; want mode 0600", st, err)
	}
	if st, err := os.Stat(filepath.Dir(h.file)); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("profile directory: %v, %v; want mode 0700", st, err)
	}

	r = h.must("profile", "create", "prod", "-X", "brokers=k1:9093,k2:9093", "-X", "sasl.mechanism=SCRAM-SHA-512",
		"-X", "user=alice", "-X", "pass=s3cret", "-X", "tls.enabled=true", "--json")
	var act struct {
		Action, Profile, Current, File string
	}
	if err := json.Unmarshal([]byte(r.Stdout), &act); err != nil || act.Action != "created" || act.Profile != "prod" || act.Current != "local" || act.File != h.file {
		t.Fatalf("create --json: %+v %v\n%s", act, err, r)
	}
	if st, err := os.Stat(h.file); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("profile file after a rewrite: %v, %v; want mode 0600", st, err)
	}
	pf := h.load()
	wantProd := map[string]string{"brokers": "k1:9093,k2:9093", "sasl.mechanism": "SCRAM-SHA-512", "user": "alice", "pass": "s3cret", "tls.enabled": "true"}
	if pf.Current != "local" || !reflect.DeepEqual(pf.Profiles["prod"], wantProd) || !reflect.DeepEqual(pf.Profiles["local"], map[string]string{"brokers": "127.0.0.1:9092"}) {
		t.Fatalf("file: %+v", pf)
	}
	h.fails(kit.ExitFailed, `profile "prod" already exists`, "profile", "create", "prod", "--brokers", "x:1")

	if r := h.must("profile", "list"); r.Stdout != "NAME    BROKERS\nlocal*  127.0.0.1:9092\nprod    k1:9093,k2:9093\n" {
		t.Fatalf("list: %s", r)
	}
	r = h.must("profile", "list", "--json")
	var list []struct {
		Name    string `json:"name"`
		Current bool   `json:"current"`
		Brokers string `json:"brokers"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &list); err != nil || len(list) != 2 || list[0].Name != "local" || !list[0].Current ||
		list[1].Name != "prod" || list[1].Current || list[1].Brokers != "k1:9093,k2:9093" {
		t.Fatalf("list --json: %+v %v\n%s", list, err, r)
	}

	r = h.must("profile", "show", "prod")
	if !strings.Contains(r.Stdout, "pass            [REDACTED]\n") || strings.Contains(r.Stdout, "s3cret") ||
		!strings.Contains(r.Stdout, "user            alice\n") || !strings.HasPrefix(r.Stdout, "PROFILE  prod\nCURRENT  false\n") {
		t.Fatalf("show: %s", r)
	}
	if r := h.must("profile", "show", "prod", "--show-secrets"); !strings.Contains(r.Stdout, "pass            s3cret\n") {
		t.Fatalf("show --show-secrets: %s", r)
	}
	r = h.must("profile", "show", "prod", "--json")
	var sh struct {
		Name     string            `json:"name"`
		Current  bool              `json:"current"`
		File     string            `json:"file"`
		Settings map[string]string `json:"settings"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &sh); err != nil || sh.Name != "prod" || sh.Current || sh.File != h.file ||
		sh.Settings["pass"] != "[REDACTED]" || sh.Settings["user"] != "alice" || len(sh.Settings) != len(wantProd) {
		t.Fatalf("show --json: %+v %v\n%s", sh, err, r)
	}

	h.must("profile", "use", "prod")
	if r := h.must("profile", "show"); !strings.HasPrefix(r.Stdout, "PROFILE  prod\nCURRENT  true\n") {
		t.Fatalf("show after use: %s", r)
	}
	// --profile names the profile show prints, as it names the one a
	// command connects with.
	if r := h.must("profile", "show", "--profile", "local"); !strings.HasPrefix(r.Stdout, "PROFILE  local\n") {
		t.Fatalf("show --profile: %s", r)
	}

	h.must("profile", "set", "prod", "pass=n3w", "tls.enabled=", "bootstrap.servers=k3:9093")
	want := map[string]string{"brokers": "k3:9093", "sasl.mechanism": "SCRAM-SHA-512", "user": "alice", "pass": "n3w"}
	if pf := h.load(); !reflect.DeepEqual(pf.Profiles["prod"], want) || pf.Current != "prod" {
		t.Fatalf("after set: %+v", pf)
	}

	r = h.must("profile", "delete", "prod")
	if want := `deleted profile "prod" in ` + h.file + "\n"; r.Stdout != want {
		t.Fatalf("delete: %q, want %q", r.Stdout, want)
	}
	if pf := h.load(); pf.Current != "" || len(pf.Profiles) != 1 {
		t.Fatalf("after delete: %+v", pf)
	}
	h.fails(kit.ExitFailed, "no profile in use", "profile", "show")
	h.must("profile", "create", "other", "--brokers", "o:9092", "--use")
	if pf := h.load(); pf.Current != "other" {
		t.Fatalf("create --use: %+v", pf)
	}
}

// TestProfileErrors: every bad command line or missing profile is one
// line naming the problem, exit 2 (usage) or 1 (the file), and the file
// is left as it was.
func TestProfileErrors(t *testing.T) {
	h := newHome(t)
	h.must("profile", "create", "a", "--brokers", "127.0.0.1:9092")
	before, err := os.ReadFile(h.file)
	if err != nil {
		t.Fatal(err)
	}
	missingCA := filepath.Join(h.dir, "missing-ca.pem")
	for _, c := range []struct {
		code int
		want string
		args []string
	}{
		{kit.ExitUsage, "missing argument", []string{"profile", "create"}},
		{kit.ExitUsage, "flag provided but not defined: -frob", []string{"profile", "list", "--frob"}},
		{kit.ExitUsage, `unknown setting "bogus"`, []string{"profile", "create", "b", "-X", "bogus=1"}},
		{kit.ExitUsage, `"nohost" is not HOST:PORT`, []string{"profile", "create", "b", "--brokers", "nohost"}},
		{kit.ExitUsage, "ssl.truststore.location", []string{"profile", "create", "b", "-X", "tls.ca=" + missingCA}},
		{kit.ExitUsage, "a profile NAME", []string{"profile", "create", "b/c"}},
		{kit.ExitUsage, `"nokv" is not key=value`, []string{"profile", "set", "a", "nokv"}},
		{kit.ExitUsage, "sasl.jaas.config is missing", []string{"profile", "set", "a", "security.protocol=SASL_SSL"}},
		{kit.ExitFailed, `no profile "ghost"`, []string{"profile", "use", "ghost"}},
		{kit.ExitFailed, `no profile "ghost"`, []string{"profile", "show", "ghost"}},
		{kit.ExitFailed, `no profile "ghost"`, []string{"profile", "delete", "ghost"}},
		{kit.ExitFailed, `no profile "ghost"`, []string{"profile", "set", "ghost", "user=x"}},
	} {
		h.fails(c.code, c.want, c.args...)
	}
	if after, err := os.ReadFile(h.file); err != nil || string(after) != string(before) {
		t.Fatalf("the file changed:\n%s\nwas:\n%s", after, before)
	}
	// A file that does not parse is named.
	if err := os.WriteFile(h.file, []byte("profiles: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h.fails(kit.ExitFailed, "profile file "+h.file, "profile", "list")
}
