package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// exitCodesKey is the annotation holding a command's exit codes, which end its help and its
// man page's description.
const exitCodesKey = "exit codes"

// writeHelp prints cmd's help, compact as man pages of small tools are: the usage line, the
// description, the flags in the order a user needs them, then the exit codes. It is written
// at once, so that a failed write is one error.
func writeHelp(w io.Writer, cmd *cobra.Command) error {
	var b strings.Builder
	if !cmd.HasParent() {
		writeCommands(&b, cmd)
	} else {
		writeCommandHelp(&b, cmd)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeCommandHelp(b *strings.Builder, cmd *cobra.Command) {
	cmd.InitDefaultHelpFlag() // help may be asked of a command that is not the one run
	fmt.Fprintf(b, "usage: %s\n\n%s\n", cmd.UseLine(), strings.TrimSpace(cmd.Long))
	if cmd.HasAvailableFlags() {
		fmt.Fprintf(b, "\nflags:\n%s", flagUsages(cmd.Flags(), helpWidth))
	}
	if codes := cmd.Annotations[exitCodesKey]; codes != "" {
		fmt.Fprintf(b, "\n%s\n", exitCodesText(codes))
	}
}

// helpUnwritten says that help asked for was not written, and returns the failure code: a
// script saving it must not take an empty file for it.
func helpUnwritten(stderr io.Writer, err error) int {
	sayf(stderr, "backup help: writing to stdout: %v\n", cause(err))
	return exitFailed
}

// exitCodesText is the paragraph a command's help and man page end with.
func exitCodesText(codes string) string {
	return "Exit codes: " + codes
}

// writeCommands prints backup's own help: the commands with their summaries.
func writeCommands(w io.Writer, root *cobra.Command) {
	fmt.Fprintln(w, "usage: backup COMMAND [flags] [args]")
	fmt.Fprintln(w, "\ncommands:")
	cmds := available(root)
	width := 0
	for _, c := range cmds {
		width = max(width, len(c.Name()))
	}
	for _, c := range cmds {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.Name(), c.Short)
	}
	root.InitDefaultHelpFlag()
	fmt.Fprintf(w, "\nflags:\n%s", flagUsages(root.Flags(), helpWidth))
	fmt.Fprintln(w, "\nRun 'backup help COMMAND' for a command's flags.")
}

// available is the commands help lists and man pages are made for, help last.
func available(root *cobra.Command) []*cobra.Command {
	var cmds []*cobra.Command
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() {
			cmds = append(cmds, c)
		}
	}
	root.InitDefaultHelpCmd()
	for _, c := range root.Commands() {
		if c.Name() == "help" {
			cmds = append(cmds, c)
		}
	}
	return cmds
}

// helpWidth is the width help wraps flag descriptions at.
const helpWidth = 100

// flagUsages lists flags as pflag's FlagUsages does, in the order they were defined, with
// their placeholders, but without the [=true|false] pflag 1.1 puts after every boolean, and
// with each description wrapped beside its flag so that lines stay within lineWidth.
func flagUsages(flags *pflag.FlagSet, lineWidth int) string {
	var names, usages []string
	width := 0
	flags.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		name := "      --" + f.Name
		if f.Shorthand != "" {
			name = "  -" + f.Shorthand + ", --" + f.Name
		}
		varname, usage := pflag.UnquoteUsage(f)
		if varname != "" {
			name += " " + varname
		}
		if def := defaultText(f); def != "" {
			usage += " (default " + def + ")"
		}
		names, usages = append(names, name), append(usages, usage)
		width = max(width, len(name))
	})
	var b strings.Builder
	for i, name := range names {
		lines := wrap(usages[i], lineWidth-width-3)
		fmt.Fprintf(&b, "%-*s   %s\n", width, name, lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintf(&b, "%*s   %s\n", width, "", l)
		}
	}
	return b.String()
}

// defaultText is a flag's default as help shows it, or "" when it is the zero value.
func defaultText(f *pflag.Flag) string {
	switch f.DefValue {
	case "", "0", "false", "[]":
		return ""
	}
	if f.Value.Type() == "string" {
		return fmt.Sprintf("%q", f.DefValue)
	}
	return f.DefValue
}

// wrap breaks text into lines of at most width bytes, at spaces.
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		if line != "" && len(line)+1+len(word) > width {
			lines, line = append(lines, line), ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	return append(lines, line)
}
