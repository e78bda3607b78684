package e2e

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestBadCommandLine: a mistake on the command line exits 2 with a message
// on stderr naming what is wrong, before touching the working directory
// (no ./data is created) or any port.
func TestBadCommandLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string // substrings of stderr
	}{
		{"unknown config key", []string{"serve", "--set", "no.such.key=1"}, []string{`unknown configuration "no.such.key"`}},
		{"unknown key in a file-style override", []string{"serve", "--override", "log.dirz=/tmp/x"}, []string{`"log.dirz"`}},
		{"bad int value", []string{"serve", "--set", "num.partitions=three"}, []string{"num.partitions", "three"}},
		{"bad boolean value", []string{"serve", "--set", "auto.create.topics.enable=maybe"}, []string{"auto.create.topics.enable", "maybe"}},
		{"bad listener", []string{"serve", "--set", "listeners=PLAINTEXT//127.0.0.1:1"}, []string{"listeners", "PLAINTEXT//127.0.0.1:1"}},
		{"unknown flag", []string{"serve", "--bogus"}, []string{"unknown flag --bogus"}},
		{"unknown flag with value", []string{"serve", "--bogus=1"}, []string{"unknown flag --bogus"}},
		{"set without key=value", []string{"serve", "--set", "novalue"}, []string{`"novalue" is not key=value`}},
		{"missing config file", []string{"serve", "--config", "/nonexistent/server.properties"}, []string{"/nonexistent/server.properties"}},
		{"unknown command", []string{"serv"}, []string{`unknown command "serv"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wd := t.TempDir()
			p := startProc(t, wd, tc.args...)
			code, err := p.wait(10 * time.Second)
			if err != nil {
				t.Fatal(err)
			}
			stderr := p.stderr()
			if code != 2 {
				t.Errorf("exit code %d, want 2\nstderr: %s", code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not name %q:\n%s", w, stderr)
				}
			}
			if out := p.stdoutString(); out != "" {
				t.Errorf("stdout %q, want nothing (errors go to stderr)", out)
			}
			if ents, _ := os.ReadDir(wd); len(ents) != 0 {
				t.Errorf("a rejected command line left %d entries in the working directory (%s ...)", len(ents), ents[0].Name())
			}
		})
	}
}
