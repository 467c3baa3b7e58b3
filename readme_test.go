package main

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

var updateREADME = flag.Bool("update-readme", false, "rewrite README.md's usage blocks from the commands' help")

// usageBlock is a code block of the README that help writes: a marker line naming it, then
// the fenced block.
var usageBlock = regexp.MustCompile("(?m)^<!-- usage ([a-z]+) -->\n```\n([^`]*)```\n")

// TestREADMEUsage checks that the README's Usage section shows each command's synopsis and
// flags exactly as --help does. After changing a flag, go test -run TestREADMEUsage
// -update-readme . rewrites the blocks; the prose around them is the author's to keep true.
func TestREADMEUsage(t *testing.T) {
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	want := usageBlocks(newRootCmd())
	seen := map[string]bool{}
	readme := usageBlock.ReplaceAllStringFunc(string(data), func(block string) string {
		m := usageBlock.FindStringSubmatch(block)
		name, got := m[1], m[2]
		seen[name] = true
		if got != want[name] && !*updateREADME {
			t.Errorf("README's usage block %q differs from help; rerun with -update-readme.\ngot:\n%s\nwant:\n%s", name, got, want[name])
		}
		return fmt.Sprintf("<!-- usage %s -->\n```\n%s```\n", name, want[name])
	})
	for name := range want {
		if !seen[name] {
			t.Errorf("README has no usage block %q (a line <!-- usage %s --> before a code block)", name, name)
		}
	}
	if *updateREADME {
		if err := os.WriteFile("README.md", []byte(readme), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// usageBlocks is what the README shows: every command's usage line under "commands", and
// for each command with flags of its own, its usage line and flags as its help lists them.
func usageBlocks(root *cobra.Command) map[string]string {
	blocks := map[string]string{}
	var synopsis strings.Builder
	for _, c := range available(root) {
		c.InitDefaultHelpFlag()
		fmt.Fprintln(&synopsis, c.UseLine())
		if hasOwnFlags(c) {
			blocks[c.Name()] = c.UseLine() + "\n\n" + flagUsages(c.Flags(), helpWidth)
		}
	}
	blocks["commands"] = synopsis.String()
	return blocks
}

// hasOwnFlags reports whether c has a flag other than -h.
func hasOwnFlags(c *cobra.Command) bool {
	own := false
	c.Flags().VisitAll(func(f *pflag.Flag) { own = own || (f.Name != "help" && !f.Hidden) })
	return own
}
