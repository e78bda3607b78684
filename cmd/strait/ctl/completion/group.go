package completion

import (
	"context"
	"fmt"

	"github.com/strait-io/strait/cmd/strait/ctl/kit"
)

// Group is `strait completion`; tree is called when a script is printed
// (the whole command tree, this group included).
func Group(tree func() []*Node) *kit.Group {
	g := &kit.Group{
		Name:    "completion",
		Summary: "print a shell completion script (bash, zsh, fish)",
		Help: `Load it in the running shell, or install it for every new one:
  bash: source <(strait completion bash)
        strait completion bash > /etc/bash_completion.d/strait
  zsh:  source <(strait completion zsh)        (after compinit)
        strait completion zsh > "${fpath[1]}/_strait"
  fish: strait completion fish | source
        strait completion fish > ~/.config/fish/completions/strait.fish`,
	}
	for _, shell := range Shells {
		g.Commands = append(g.Commands, &kit.Command{
			Name:     shell,
			Summary:  fmt.Sprintf("print the %s completion script", shell),
			Examples: []string{examples[shell]},
			Offline:  true,
			Run: func(_ context.Context, c *kit.Ctx, _ []string, _ any) int {
				s, err := Script(shell, "strait", tree())
				if err != nil {
					return c.Fail(err)
				}
				fmt.Fprint(c.Stdout, s)
				return kit.ExitOK
			},
		})
	}
	return g
}

var examples = map[string]string{
	"bash": "source <(strait completion bash)",
	"zsh":  "source <(strait completion zsh)",
	"fish": "strait completion fish | source",
}
