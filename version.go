package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// versionJSON is what version --json prints, and what the text lines say.
type versionJSON struct {
	Version  string `json:"version"`
	Revision string `json:"revision"` // "" when the binary was built outside a VCS checkout
	Modified bool   `json:"modified"` // the checkout had uncommitted changes
	Go       string `json:"go"`
}

// buildVersion is what the binary knows of itself: the version -ldflags stamped, and the
// VCS revision and Go version the toolchain recorded.
func buildVersion() versionJSON {
	v := versionJSON{Version: version, Go: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

// String is the text version and --version print: "backup VERSION" first, as scripts read it.
func (v versionJSON) String() string {
	rev := v.Revision
	switch {
	case rev == "":
		rev = "unknown (not built from a git checkout)"
	case v.Modified:
		rev += " (modified)"
	}
	return fmt.Sprintf("backup %s\nrevision %s\n%s\n", v.Version, rev, v.Go)
}

func newVersionCmd() *cobra.Command {
	cmd := newCommand("version [--json]", "print the version",
		"Prints backup VERSION (the version receipts record), the git revision the binary was built\nfrom and whether that checkout was modified, and the Go version.", "0 printed, 1 it could not be written, 2 usage.")
	asJSON := cmd.Flags().Bool("json", false, "print the version as JSON")
	cmd.RunE = withCode(func(cmd *cobra.Command, args []string) int {
		if len(args) > 0 {
			return usageError(cmd.ErrOrStderr(), "version", argCount("no argument", len(args)))
		}
		v := buildVersion()
		if *asJSON {
			if err := writeJSON(cmd.OutOrStdout(), v); err != nil {
				return jsonFailed(cmd.ErrOrStderr(), "version", err)
			}
			return exitComplete
		}
		return printVersion(cmd.OutOrStdout(), cmd.ErrOrStderr(), "backup version")
	})
	return cmd
}

// printVersion prints the version for backup version and backup --version (who names the
// command in the error). A version a script asked for and did not get is not a success, as
// completion's script is not: exit 1, never the usage code.
func printVersion(stdout, stderr io.Writer, who string) int {
	if _, err := fmt.Fprint(stdout, buildVersion()); err != nil {
		sayf(stderr, "%s: writing to stdout: %v\n", who, cause(err))
		return exitFailed
	}
	return exitComplete
}
