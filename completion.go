package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"
)

const completionLong = `Prints the completion script for SHELL (bash, zsh or fish). The script asks backup itself
what to complete, so it stays right as commands and flags change. bash needs the
bash-completion package.

  bash:  source <(backup completion bash)
         or: backup completion bash > /etc/bash_completion.d/backup
  zsh:   backup completion zsh > "${fpath[1]}/_backup"
  fish:  backup completion fish > ~/.config/fish/completions/backup.fish`

// shells are the shells completion writes a script for.
var shells = []string{"bash", "zsh", "fish"}

func newCompletionCmd() *cobra.Command {
	cmd := newCommand("completion SHELL", "print a shell completion script (bash, zsh, fish)",
		completionLong, "0 printed, 1 the script could not be written, 2 usage.")
	cmd.ValidArgs = shells
	cmd.RunE = withCode(func(cmd *cobra.Command, args []string) int {
		if len(args) != 1 {
			return usageError(cmd.ErrOrStderr(), "completion", argCount("one SHELL (bash, zsh or fish)", len(args)))
		}
		err := writeCompletion(cmd.Root(), args[0], cmd.OutOrStdout())
		var unknown unknownShell
		switch {
		case errors.As(err, &unknown):
			return usageError(cmd.ErrOrStderr(), "completion", err)
		case err != nil:
			sayf(cmd.ErrOrStderr(), "backup completion: %v\n", err)
			return exitFailed
		}
		return exitComplete
	})
	return cmd
}

// unknownShell is a SHELL completion has no script for.
type unknownShell string

func (s unknownShell) Error() string {
	return fmt.Sprintf("unknown shell %q: want bash, zsh or fish", string(s))
}

// writeCompletion writes cobra's script for shell, with descriptions.
func writeCompletion(root *cobra.Command, shell string, w io.Writer) error {
	switch shell {
	case "bash":
		return root.GenBashCompletionV2(w, true)
	case "zsh":
		return root.GenZshCompletion(w)
	case "fish":
		return root.GenFishCompletion(w, true)
	}
	return unknownShell(shell)
}

// newManCmd is the hidden `backup man DIR` that make man runs. The pages are made by the
// binary itself because the command tree lives in package main, which no generator could
// import; so the pages always describe the binary that was built.
func newManCmd() *cobra.Command {
	cmd := newCommand("man DIR", "write a man page for every command into DIR",
		"Writes backup.1 and backup-COMMAND.1 for every command into DIR (created when missing).",
		"0 written, 1 a page could not be written, 2 usage.")
	cmd.Hidden = true
	cmd.RunE = withCode(func(cmd *cobra.Command, args []string) int {
		err := refuseEmpty(cmd.Flags(), nil, args, "DIR")
		if len(args) != 1 {
			err = argCount("one DIR", len(args))
		}
		if err != nil {
			return usageError(cmd.ErrOrStderr(), "man", err)
		}
		if err := writeManPages(cmd.Root(), args[0]); err != nil {
			sayf(cmd.ErrOrStderr(), "backup man: %v\n", err)
			return exitFailed
		}
		return exitComplete
	})
	return cmd
}

// writeManPages writes one page per available command, each description ending with the
// command's exit codes as its help does.
func writeManPages(root *cobra.Command, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var commands strings.Builder
	writeCommands(&commands, root)
	root.Long = "```\n" + commands.String() + "```\n\nSee backup-COMMAND(1) for each command."
	root.Flags().VisitAll(func(f *pflag.Flag) { f.Hidden = true })
	for _, c := range available(root) {
		describeForMan(c)
	}
	header := &doc.GenManHeader{Title: "BACKUP", Section: "1", Source: "backup " + version, Manual: "backup manual"}
	return doc.GenManTree(root, header, dir)
}

// manWidth is the width flag descriptions wrap at in a man page, whose text man indents.
const manWidth = 72

// describeForMan ends c's description with its flags, listed as its help lists them, and its
// exit codes. cobra/doc's own OPTIONS section would show defaults where help shows
// placeholders (--keep-within= rather than --keep-within DURATION), booleans as
// --force[=false], and the flags sorted; so the flags are hidden from it instead.
func describeForMan(c *cobra.Command) {
	c.InitDefaultHelpFlag()
	if c.HasAvailableFlags() {
		c.Long += "\n\nFlags:\n\n```\n" + flagUsages(c.Flags(), manWidth) + "```"
	}
	if codes := c.Annotations[exitCodesKey]; codes != "" {
		c.Long += "\n\n" + exitCodesText(codes)
	}
	c.Flags().VisitAll(func(f *pflag.Flag) { f.Hidden = true })
}
