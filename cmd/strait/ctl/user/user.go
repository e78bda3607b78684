// Package user is `strait user create|delete|list`: SCRAM credentials
// through the public DescribeUserScramCredentials and
// AlterUserScramCredentials APIs (KIP-554), as kafka-configs.sh --alter
// --add-config 'SCRAM-SHA-256=[...]' --entity-type users and rpk security
// user manage them.
package user

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/strait-io/strait/cmd/strait/ctl/kit"
)

// Kafka's ScramMechanism bounds and kafka-configs.sh's default iterations.
const (
	minIterations     = 4096
	maxIterations     = 16384
	defaultIterations = 4096
	defaultMechanism  = "SCRAM-SHA-256"
)

// Group is `strait user`.
func Group() *kit.Group {
	return &kit.Group{
		Name:    "user",
		Summary: "create, delete and list SCRAM users",
		Help: `A user is a SCRAM credential (SCRAM-SHA-256 or SCRAM-SHA-512) the cluster
checks SASL logins with; what the user may do is its ACLs (strait acl) on
the principal User:NAME. --password - reads the password from the first line
of stdin (keeps it out of the process list and shell history).`,
		Commands: []*kit.Command{createCommand(), deleteCommand(), listCommand()},
	}
}

type createFlags struct {
	Password   string
	Mechanism  string
	Iterations int
	Update     bool
	mechanism  kadm.ScramMechanism
}

func (f *createFlags) Check() error {
	if f.Password == "" {
		return errors.New("--password is required (--password - reads it from stdin)")
	}
	if f.Iterations < minIterations || f.Iterations > maxIterations {
		return fmt.Errorf("--iterations must be %d to %d, got %d", minIterations, maxIterations, f.Iterations)
	}
	var err error
	f.mechanism, err = parseMechanism(f.Mechanism)
	return err
}

type deleteFlags struct {
	Mechanism string
	mechanism kadm.ScramMechanism // 0: every mechanism the user has
}

func (f *deleteFlags) Check() error {
	if f.Mechanism == "" {
		return nil
	}
	var err error
	f.mechanism, err = parseMechanism(f.Mechanism)
	return err
}

func parseMechanism(s string) (kadm.ScramMechanism, error) {
	switch strings.ToUpper(s) {
	case "SCRAM-SHA-256":
		return kadm.ScramSha256, nil
	case "SCRAM-SHA-512":
		return kadm.ScramSha512, nil
	}
	return 0, fmt.Errorf("--mechanism must be SCRAM-SHA-256 or SCRAM-SHA-512, got %q", s)
}

func createCommand() *kit.Command {
	return &kit.Command{
		Name:    "create",
		Args:    "NAME --password P [--mechanism SCRAM-SHA-256|SCRAM-SHA-512] [--iterations N]",
		Summary: "create a SCRAM user (--update changes an existing user's password)",
		Examples: []string{
			"strait user create alice --password s3cret",
			"strait user create svc --password - --mechanism SCRAM-SHA-512 < password.txt",
			"strait user create alice --password n3w --update",
		},
		MinArgs: 1, MaxArgs: 1,
		Flags: func(fs *flag.FlagSet) any {
			f := &createFlags{}
			fs.StringVar(&f.Password, "password", "", "the `PASSWORD` (- reads the first line of stdin)")
			fs.StringVar(&f.Mechanism, "mechanism", defaultMechanism, "`MECHANISM`: SCRAM-SHA-256 or SCRAM-SHA-512")
			fs.IntVar(&f.Iterations, "iterations", defaultIterations, "SCRAM iterations `N` (4096 to 16384)")
			fs.BoolVar(&f.Update, "update", false, "replace the password if the user has one for the mechanism")
			return f
		},
		Run: runCreate,
	}
}

func deleteCommand() *kit.Command {
	return &kit.Command{
		Name:    "delete",
		Args:    "NAME... [--mechanism SCRAM-SHA-256|SCRAM-SHA-512]",
		Summary: "delete SCRAM users (every mechanism, or --mechanism's only)",
		Examples: []string{
			"strait user delete alice",
			"strait user delete alice bob --mechanism SCRAM-SHA-512",
		},
		MinArgs: 1, MaxArgs: -1,
		Flags: func(fs *flag.FlagSet) any {
			f := &deleteFlags{}
			fs.StringVar(&f.Mechanism, "mechanism", "", "only this `MECHANISM`'s credential")
			return f
		},
		Run: runDelete,
	}
}

func listCommand() *kit.Command {
	return &kit.Command{
		Name:     "list",
		Args:     "[NAME...]",
		Summary:  "list SCRAM users and their mechanisms",
		Examples: []string{"strait user list", "strait user list alice --json"},
		MaxArgs:  -1,
		Run:      runList,
	}
}

// credential is one user's credential for one mechanism, a row of list
// and the result of create and delete (--json).
type credential struct {
	User       string `json:"user"`
	Mechanism  string `json:"mechanism"`
	Iterations int32  `json:"iterations,omitempty"`
	Error      string `json:"error,omitempty"`
	err        error
}

func runCreate(ctx context.Context, c *kit.Ctx, args []string, flags any) int {
	f := flags.(*createFlags)
	name := args[0]
	password := f.Password
	if password == "-" {
		line, err := bufio.NewReader(c.Stdin).ReadString('\n')
		if password = strings.TrimRight(line, "\r\n"); password == "" {
			return c.Usagef("--password -: no password on stdin (%v)", err)
		}
	}
	adm, err := c.Admin()
	if err != nil {
		return c.Fail(err)
	}
	if !f.Update {
		// AlterUserScramCredentials upserts; create refuses to replace a
		// password silently (rpk's create fails on an existing user).
		creds, err := describe(ctx, adm, []string{name})
		if err != nil {
			return c.Fail(err)
		}
		if slices.ContainsFunc(creds, func(cr credential) bool { return cr.Error == "" && cr.Mechanism == f.mechanism.String() }) {
			return c.Fail(fmt.Errorf("user %s already has a %s credential (--update replaces its password)", name, f.mechanism))
		}
	}
	altered, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: name, Mechanism: f.mechanism,
		Iterations: int32(f.Iterations), Password: password}})
	if err != nil {
		return c.Fail(err)
	}
	cr := credential{User: name, Mechanism: f.mechanism.String(), Iterations: int32(f.Iterations)}
	for _, a := range altered {
		setError(&cr, kit.WithMessage(a.Err, a.ErrMessage))
	}
	return printCreds(c, []credential{cr}, true)
}

func runDelete(ctx context.Context, c *kit.Ctx, args []string, flags any) int {
	f := flags.(*deleteFlags)
	adm, err := c.Admin()
	if err != nil {
		return c.Fail(err)
	}
	var dels []kadm.DeleteSCRAM
	var out []credential
	if f.mechanism != 0 {
		for _, u := range args {
			dels = append(dels, kadm.DeleteSCRAM{User: u, Mechanism: f.mechanism})
		}
	} else {
		// Deletion names a mechanism: delete each one the user has; a
		// missing user is the describe's error (RESOURCE_NOT_FOUND).
		creds, err := describe(ctx, adm, args)
		if err != nil {
			return c.Fail(err)
		}
		for _, cr := range creds {
			if cr.Error != "" {
				out = append(out, cr)
				continue
			}
			m, _ := parseMechanism(cr.Mechanism)
			dels = append(dels, kadm.DeleteSCRAM{User: cr.User, Mechanism: m})
		}
	}
	// Kafka refuses a request that alters one user twice
	// (DUPLICATE_RESOURCE): each round deletes one credential per user.
	for len(dels) > 0 {
		var round, later []kadm.DeleteSCRAM
		inRound := map[string]bool{}
		for _, d := range dels {
			if inRound[d.User] {
				later = append(later, d)
				continue
			}
			inRound[d.User] = true
			round = append(round, d)
		}
		altered, err := adm.AlterUserSCRAMs(ctx, round, nil)
		if err != nil {
			return c.Fail(err)
		}
		errs := map[string]error{}
		for _, a := range altered {
			errs[a.User] = kit.WithMessage(a.Err, a.ErrMessage)
		}
		for _, d := range round {
			cr := credential{User: d.User, Mechanism: d.Mechanism.String()}
			setError(&cr, errs[d.User])
			out = append(out, cr)
		}
		dels = later
	}
	return printCreds(c, out, true)
}

func runList(ctx context.Context, c *kit.Ctx, args []string, _ any) int {
	adm, err := c.Admin()
	if err != nil {
		return c.Fail(err)
	}
	creds, err := describe(ctx, adm, args)
	if err != nil {
		return c.Fail(err)
	}
	return printCreds(c, creds, len(args) > 0)
}

// describe is every credential of users (all users if none), sorted; a
// user the cluster refuses (RESOURCE_NOT_FOUND) is a credential with its
// error.
func describe(ctx context.Context, adm *kadm.Client, users []string) ([]credential, error) {
	described, err := adm.DescribeUserSCRAMs(ctx, users...)
	if err != nil {
		return nil, err
	}
	creds := []credential{}
	for _, d := range described.Sorted() {
		if d.Err != nil {
			cr := credential{User: d.User}
			setError(&cr, kit.WithMessage(d.Err, d.ErrMessage))
			creds = append(creds, cr)
			continue
		}
		for _, ci := range d.CredInfos {
			creds = append(creds, credential{User: d.User, Mechanism: ci.Mechanism.String(), Iterations: ci.Iterations})
		}
	}
	return creds, nil
}

func setError(cr *credential, err error) {
	if err != nil {
		cr.Error, cr.err = kit.ErrName(err), err
	}
}

// printCreds prints credentials as a table or --json; each failed one also on
// stderr, and then exit 1.
func printCreds(c *kit.Ctx, creds []credential, withErrors bool) int {
	code := kit.ExitOK
	for _, cr := range creds {
		if cr.err != nil {
			code = c.ItemFailed(cr.User, cr.err)
		}
	}
	if c.Globals.JSON {
		return c.JSONThen(creds, code)
	}
	w := kit.NewTable(c.Stdout)
	head := "USER\tMECHANISM\tITERATIONS"
	if withErrors {
		head += "\tERROR"
	}
	fmt.Fprintln(w, head)
	for _, cr := range creds {
		iter := "-"
		if cr.Iterations > 0 {
			iter = fmt.Sprint(cr.Iterations)
		}
		line := fmt.Sprintf("%s\t%s\t%s", cr.User, orDash(cr.Mechanism), iter)
		if withErrors {
			line += "\t" + cr.Error
		}
		fmt.Fprintln(w, line)
	}
	w.Flush()
	return code
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
