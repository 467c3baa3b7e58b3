// Command backup archives directory trees into standard zip files and writes a receipt that
// says whether the backup is complete.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"
)

// version is the tool's version, as receipts record it; release builds set it with -ldflags.
var version = "0.1.0-dev"

// Exit codes; scripts depend on them.
const (
	exitComplete    = 0
	exitFailed      = 1
	exitUsage       = 2
	exitIncomplete  = 3
	exitLocked      = 4 // a backup set is locked by another running backup
	exitInterrupted = 130
)

// command is one subcommand: its one-line summary and the function that runs it.
type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

func commands() map[string]command {
	return map[string]command{
		"create":  {"back up SOURCE... into a new zip archive", runCreate},
		"verify":  {"check that an archive is whole, without extracting it", runVerify},
		"list":    {"list the entries of an archive", runList},
		"restore": {"extract an archive into a folder, safely", runRestore},
		"status":  {"show a backup set's backups and check the LATEST one", runStatus},
		"prune":   {"delete a backup set's old backups by --keep-* rules", runPrune},
		"version": {"print the version", runVersion},
		"help":    {"show help for a command", runHelp},
	}
}

// commandOrder is the order in which help lists the commands.
var commandOrder = []string{"create", "verify", "list", "restore", "status", "prune", "version", "help"}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		writeUsage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "--help":
		writeUsage(stdout)
		return exitComplete
	case "--version":
		return runVersion(nil, stdout, stderr)
	}
	cmd, ok := commands()[args[0]]
	if !ok {
		return usageError(stderr, "", fmt.Errorf("unknown command %q", args[0]))
	}
	return cmd.run(args[1:], stdout, stderr)
}

func writeUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: backup COMMAND [flags] [args]")
	fmt.Fprintln(w, "\ncommands:")
	cmds := commands()
	for _, name := range commandOrder {
		fmt.Fprintf(w, "  %-9s %s\n", name, cmds[name].summary)
	}
	fmt.Fprintln(w, "\nRun 'backup help COMMAND' for a command's flags.")
}

func runVersion(_ []string, stdout, _ io.Writer) int {
	fmt.Fprintf(stdout, "backup %s\n", version)
	return exitComplete
}

func runHelp(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		writeUsage(stdout)
		return exitComplete
	}
	cmd, ok := commands()[args[0]]
	if !ok {
		return usageError(stderr, "", fmt.Errorf("unknown command %q", args[0]))
	}
	return cmd.run([]string{"--help"}, stdout, stderr)
}

// usageError prints err as one line with a hint, and returns the usage exit code.
func usageError(stderr io.Writer, cmd string, err error) int {
	name := "backup"
	if cmd != "" {
		name += " " + cmd
	}
	fmt.Fprintf(stderr, "%s: %v\nRun 'backup help%s' for usage.\n", name, err, prefixSpace(cmd))
	return exitUsage
}

func prefixSpace(s string) string {
	if s == "" {
		return ""
	}
	return " " + s
}

// parseFlags parses args with fs. It returns done when the command should stop with code:
// after --help (0) or a usage error (2).
func parseFlags(fs *pflag.FlagSet, args []string, usage string, stdout, stderr io.Writer) (code int, done bool) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	if errors.Is(err, pflag.ErrHelp) {
		fmt.Fprintf(stdout, "usage: %s\n\n%s", usage, fs.FlagUsages())
		return exitComplete, true
	}
	if err != nil {
		return usageError(stderr, fs.Name(), err), true
	}
	return 0, false
}
