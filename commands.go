package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func init() {
	// help lists the commands in the order a user meets them, not alphabetically.
	cobra.EnableCommandSorting = false
}

// interruptibleCommands are the commands that stop cleanly on SIGINT and SIGTERM
// (interruptible): from the start of the process, not only once their work begins (see
// catchEarly). Others (version, completion, help) keep Go's default action.
var interruptibleCommands = map[string]bool{
	"create": true, "verify": true, "list": true, "restore": true, "status": true,
	"sets": true, "prune": true, "activate": true, "adopt": true,
}

// run is the single entry point: main calls it, and so do the in-process tests. It builds
// a fresh command tree per call, runs it, and maps what happened to the exit code; cobra's
// own errors (flags, unknown commands) become one-line usage errors.
func run(args []string, stdout, stderr io.Writer) int {
	// One rule for every command: a reader of stdout or stderr that went away (| head -1)
	// never kills it with SIGPIPE, whatever it is doing; it stops printing on a stderr that
	// failed, and says what a cut stdout cost (see outputCut).
	survivePipes()
	if len(args) > 0 && interruptibleCommands[args[0]] {
		catchEarly()
		defer endEarly() // a command that ended before interruptible (a usage error)
	}
	stderr = newStopOnError(stderr)
	root := newRootCmd()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteC()
	var code exitStatus
	switch {
	case err == nil && root.Annotations[helpFailedKey] != "":
		return exitFailed
	case err == nil:
		return exitComplete
	case errors.As(err, &code):
		return int(code)
	}
	return usageError(stderr, commandPath(cmd), shortValueError(err))
}

// maxShownValue is how much of a bad flag value its usage error shows. A value is a word, a
// number or a duration; one longer is a file's content pasted in, which pflag's error (the
// value, and again in its cause) would print whole on one line, up to the kernel's 128 KiB
// per argument.
const maxShownValue = 64

// shortValueError is err, or for a flag value over maxShownValue bytes, the flag named with
// the start of its value and its length.
func shortValueError(err error) error {
	var bad *pflag.InvalidValueError
	if !errors.As(err, &bad) || len(bad.GetValue()) <= maxShownValue {
		return err
	}
	v := bad.GetValue()
	return fmt.Errorf("invalid argument %q… (%d bytes) for \"--%s\" flag", v[:maxShownValue], len(v), bad.GetFlag().Name)
}

// commandPath is cmd's path below backup ("create"), "" for backup itself.
func commandPath(cmd *cobra.Command) string {
	if cmd == nil || !cmd.HasParent() {
		return ""
	}
	return strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "backup",
		Short: "back up directory trees into standard zip files, with a receipt that tells the truth",
		// Arbitrary arguments reach runRoot, which names an unknown command and suggests one.
		Args:                       cobra.ArbitraryArgs,
		RunE:                       withCode(runRoot),
		SilenceErrors:              true,
		SilenceUsage:               true,
		SuggestionsMinimumDistance: 2,
		DisableAutoGenTag:          true, // man pages carry no generation date noise
		CompletionOptions:          cobra.CompletionOptions{DisableDefaultCmd: true},
	}
	// --version is runRoot's own, not cobra's, whose write error would come back as a usage
	// error (exit 2).
	root.Flags().Bool("version", false, "print the version") // no -v shorthand
	root.AddCommand(newCreateCmd(), newVerifyCmd(), newListCmd(), newRestoreCmd(),
		newStatusCmd(), newSetsCmd(), newPruneCmd(), newActivateCmd(), newAdoptCmd(),
		newVersionCmd(), newCompletionCmd(), newManCmd())
	root.SetHelpCommand(newHelpCmd())
	// Help asked for with -h or --help: cobra's help func returns nothing, so a failed write
	// is noted on the root for run's exit code.
	root.Annotations = map[string]string{}
	root.SetHelpFunc(func(cmd *cobra.Command, _ []string) {
		if err := writeHelp(cmd.OutOrStdout(), cmd); err != nil {
			helpUnwritten(cmd.ErrOrStderr(), err)
			root.Annotations[helpFailedKey] = err.Error()
		}
	})
	return root
}

// helpFailedKey is the root's annotation holding why help that -h or --help asked for could
// not be written.
const helpFailedKey = "help failed"

// newCommand is a subcommand with what every one of them has: a usage line, a summary, a
// description, the exit codes its help ends with, and flags listed in the order defined.
func newCommand(use, short, long, exitCodes string) *cobra.Command {
	cmd := &cobra.Command{
		Use:         use,
		Short:       short,
		Long:        long,
		Args:        cobra.ArbitraryArgs, // each command counts its own, with its own message
		Annotations: map[string]string{exitCodesKey: exitCodes},
		// The usage line says [flags] where a command has any worth naming.
		DisableFlagsInUseLine: true,
	}
	cmd.Flags().SortFlags = false
	return cmd
}

// runRoot runs for backup --version, for backup without a command (usage on stderr, exit
// 2) and for a command that does not exist.
func runRoot(cmd *cobra.Command, args []string) int {
	if v, _ := cmd.Flags().GetBool("version"); v {
		return printVersion(cmd.OutOrStdout(), cmd.ErrOrStderr(), "backup --version")
	}
	if len(args) == 0 {
		writeHelp(cmd.ErrOrStderr(), cmd)
		return exitUsage
	}
	return usageError(cmd.ErrOrStderr(), "", unknownCommand(cmd.Root(), args[0]))
}

// unknownCommand names the command not found and the ones it may be a typo of.
func unknownCommand(root *cobra.Command, name string) error {
	err := fmt.Errorf("unknown command %q", name)
	if s := root.SuggestionsFor(name); len(s) > 0 {
		err = fmt.Errorf("%w; did you mean %s?", err, strings.Join(s, " or "))
	}
	return err
}

func newHelpCmd() *cobra.Command {
	cmd := newCommand("help [COMMAND]", "show help for a command",
		"Shows the usage, the description, the flags and the exit codes of COMMAND, or the list\nof commands.",
		"0 help shown, 1 it could not be written to stdout, 2 no such command.")
	cmd.ValidArgsFunction = func(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var names []cobra.Completion
		for _, c := range cmd.Root().Commands() {
			if c.IsAvailableCommand() && len(args) == 0 {
				names = append(names, cobra.CompletionWithDesc(c.Name(), c.Short))
			}
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
	cmd.RunE = withCode(func(cmd *cobra.Command, args []string) int {
		root := cmd.Root()
		target, rest, err := root.Find(args)
		if err == nil && len(rest) > 0 {
			err = unknownCommand(root, rest[0])
		}
		if err != nil {
			return usageError(cmd.ErrOrStderr(), "", err)
		}
		if err := writeHelp(cmd.OutOrStdout(), target); err != nil {
			return helpUnwritten(cmd.ErrOrStderr(), err)
		}
		return exitComplete
	})
	return cmd
}
