package completion_test

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strait-io/strait/cmd/strait/ctl/completion"
	"github.com/strait-io/strait/cmd/strait/ctl/ctltest"
	"github.com/strait-io/strait/cmd/strait/ctl/kit"
)

func TestMain(m *testing.M) { os.Exit(ctltest.Main(m)) }

// topicGroup is a group shaped like `strait topic` (built in parallel in
// its own package): the generator works from whatever tree it is given.
func topicGroup() *kit.Group {
	noop := func(context.Context, *kit.Ctx, []string, any) int { return 0 }
	return &kit.Group{Name: "topic", Summary: "create, list, describe and delete topics", Commands: []*kit.Command{
		{Name: "create", Summary: "create topics", Run: noop, Flags: func(fs *flag.FlagSet) any {
			fs.Int("p", -1, "partitions")
			fs.Int("replicas", -1, "replicas")
			fs.Bool("dry-run", false, "validate only")
			return nil
		}},
		{Name: "list", Summary: "list topics", Run: noop},
	}}
}

// complete runs the bash script's function on line (the word being
// completed is the last one; a trailing space starts an empty one) and
// returns COMPREPLY.
func complete(t *testing.T, script, line string) []string {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed: the bash script is not checked")
	}
	f := filepath.Join(t.TempDir(), "strait.bash")
	if err := os.WriteFile(f, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	prog := `source "$1" || exit 3
read -ra COMP_WORDS <<<"$2"
[[ $2 == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
_strait
printf '%s\n' "${COMPREPLY[@]}"`
	out, err := exec.Command(bash, "-c", prog, "bash", f, line).CombinedOutput()
	if err != nil {
		t.Fatalf("bash completing %q: %v\n%s", line, err, out)
	}
	return strings.Fields(string(out))
}

func checkBash(t *testing.T, script string, cases map[string]string) {
	t.Helper()
	if bash, err := exec.LookPath("bash"); err == nil {
		f := filepath.Join(t.TempDir(), "syntax.bash")
		if err := os.WriteFile(f, []byte(script), 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(bash, "-n", f).CombinedOutput(); err != nil {
			t.Fatalf("bash -n: %v\n%s", err, out)
		}
	}
	for line, want := range cases {
		if got := strings.Join(complete(t, script, line), " "); got != want {
			t.Errorf("%q completes to %q, want %q", line, got, want)
		}
	}
}

// TestBashCompletesTheTree: groups, subcommands and flags (kit's global
// flags with each command's own), skipping flags' values when finding
// the command typed.
func TestBashCompletesTheTree(t *testing.T) {
	tree := append([]*completion.Node{{Name: "serve", Flags: []completion.Flag{{Name: "config", TakesValue: true}}}},
		completion.FromGroups([]*kit.Group{topicGroup()})...)
	checkBash(t, completion.Bash("strait", tree), map[string]string{
		"strait to":                             "topic",
		"strait ":                               "serve topic",
		"strait topic ":                         "create list",
		"strait topic cr":                       "create",
		"strait topic create orders --rep":      "--replicas",
		"strait topic create orders -":          "-X --brokers --command-config --config-file --dry-run --json -p --profile --replicas --timeout",
		"strait --brokers h:1 topic c":          "create",
		"strait topic --profile dev create --d": "--dry-run",
		"strait topic create orders ":           "",
		"strait serve --co":                     "--config",
	})
}

// TestScriptsFromTheBinary: `strait completion bash|zsh|fish` print
// scripts of the whole tree (the client groups and serve, mirror, bench,
// version); bash's is loaded and run, zsh's and fish's are checked by
// their shells when installed (skipped, said so, when not).
func TestScriptsFromTheBinary(t *testing.T) {
	tg := ctltest.Target{}
	bash := ctltest.Must(t, tg, "", "completion", "bash")
	checkBash(t, bash.Stdout, map[string]string{
		"strait pro":                       "produce profile",
		"strait profile cr":                "create",
		"strait profile create dev --us":   "--use",
		"strait mirror st":                 "start stop",
		"strait mirror list --bootstrap-s": "--bootstrap-server",
		"strait completion ":               "bash zsh fish",
		"strait ver":                       "version",
		"strait bench e":                   "e2e",
	})
	if r := ctltest.Run(t, tg, "", "completion", "ksh"); r.Code != kit.ExitUsage || !strings.HasPrefix(r.Stderr, `strait completion: unknown command "ksh"`) {
		t.Fatalf("an unknown shell: %s", r)
	}
	for _, shell := range []string{"zsh", "fish"} {
		t.Run(shell, func(t *testing.T) {
			r := ctltest.Must(t, tg, "", "completion", shell)
			for _, name := range []string{"profile", "completion", "mirror", "serve", "show-secrets"} {
				if !strings.Contains(r.Stdout, name) {
					t.Errorf("the %s script does not mention %s", shell, name)
				}
			}
			sh, err := exec.LookPath(shell)
			if err != nil {
				t.Skipf("%s is not installed on this machine: its script's syntax is NOT checked", shell)
			}
			f := filepath.Join(t.TempDir(), "strait."+shell)
			if err := os.WriteFile(f, []byte(r.Stdout), 0o600); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(sh, "-n", f).CombinedOutput(); err != nil {
				t.Fatalf("%s -n: %v\n%s", shell, err, out)
			}
			for line, want := range map[string]string{"strait pro": "produce profile", "strait mirror st": "start stop", "strait profile create x --us": "--use"} {
				out, err := exec.Command(sh, "-c", shellComplete[shell], shell, f, line).CombinedOutput()
				if got := strings.Join(strings.Fields(string(out)), " "); err != nil || got != want {
					t.Errorf("%s: %q completes to %q (%v), want %q", shell, line, out, err, want)
				}
			}
		})
	}
}

// shellComplete are the programs that run a script's completion of a line
// (the third argument; the first is the shell's name, which fish counts)
// from the script file (the second) and print the candidates. fish has
// `complete -C`; zsh's completion system needs a terminal, so the
// builtins the script calls print what they are given instead.
var shellComplete = map[string]string{
	"fish": `source $argv[2]; complete -C"$argv[3]" | string replace -r '\t.*' ''; true`,
	"zsh": `compdef() { :; }
compadd() { shift; print -l -- "$@"; }
_describe() { local -a arr; arr=("${(@P)2}"); print -l -- "${arr[@]%%:*}"; }
_files() { :; }
source $1
words=(${=2})
CURRENT=${#words}
_strait | grep -- "^${words[CURRENT]}"`,
}
