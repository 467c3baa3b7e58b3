package main

// The glue every command shares, written once: exit codes, usage errors, JSON output, the
// backup set's lock, and what a command prints when an archive cannot be read.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"backup/backupset"
	"backup/backupset/s3store"
	"backup/format"
	"backup/report"
	"backup/seal"
)

// Exit codes; scripts depend on them.
const (
	exitComplete    = 0
	exitFailed      = 1
	exitUsage       = 2
	exitIncomplete  = 3
	exitLocked      = 4 // a backup set is locked by another running backup
	exitInterrupted = 130
)

// exitStatus is the error a command returns to cobra when it has printed why it stopped:
// run() turns it back into the exit code without printing anything more.
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// withCode adapts a command body that prints its own output and returns an exit code to
// cobra's RunE, so that every command ends through run().
func withCode(body func(cmd *cobra.Command, args []string) int) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if i := secretArg(args); i >= 0 {
			err := fmt.Errorf("argument #%d is a secret key, not a path (not repeated here): keep a key in a file of mode 0600, and give the file to --identity where one is wanted", i+1)
			return exitStatus(usageError(cmd.ErrOrStderr(), commandPath(cmd), err))
		}
		if code := body(cmd, args); code != exitComplete {
			return exitStatus(code)
		}
		return nil
	}
}

// secretArg is the position of the first of args that holds a secret key (seal.IsSecretKey)
// and names nothing on disk, -1 for none: a key pasted where a path goes came back in the
// error that the path is missing, to a terminal, a cron job's mail or a CI log. A file or
// folder of that name is one, and used as any other.
func secretArg(args []string) int {
	for i, a := range args {
		if seal.IsSecretKey(a) {
			if _, err := os.Lstat(a); err != nil {
				return i
			}
		}
	}
	return -1
}

// stopped says on stderr, as its one line, why the command cmd ("activate") stopped, and
// returns it: for a --json answer that carries it as "error".
func stopped(stderr io.Writer, cmd string, err error) error {
	sayf(stderr, "backup %s: %v\n", cmd, err)
	return err
}

// usageError prints err as one line with a hint, and returns the usage exit code. cmd is
// the command's path below backup ("create"), or "" for backup itself.
func usageError(stderr io.Writer, cmd string, err error) int {
	name := "backup"
	if cmd != "" {
		name += " " + cmd
	}
	sayf(stderr, "%s: %v\nRun 'backup help%s' for usage.\n", name, err, prefixSpace(cmd))
	return exitUsage
}

func prefixSpace(s string) string {
	if s == "" {
		return ""
	}
	return " " + s
}

// argCount is the usage error for a wrong number of arguments: "want one DIR, got 2
// arguments".
func argCount(want string, got int) error {
	return fmt.Errorf("want %s, got %s", want, format.Plural(got, "argument", "arguments"))
}

// writeJSON prints v indented, as every --json output is printed. Its error (a closed pipe,
// a full disk) must fail the command: a script reading stdout would get half an answer.
func writeJSON(w io.Writer, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// sayf prints a line to a person (stderr) with the non-printable bytes of each string,
// error or Stringer argument escaped (format.EscapeText): paths, names, a set's or a
// server's text and the errors that carry them come from outside, and no byte of theirs may
// forge a line or drive the terminal. Text that is printable (a name QuoteName has quoted
// already) is as it is.
func sayf(w io.Writer, layout string, args ...any) {
	for i, a := range args {
		switch v := a.(type) {
		case string:
			args[i] = format.EscapeText(v)
		case error:
			args[i] = format.EscapeText(v.Error())
		case fmt.Stringer:
			args[i] = format.EscapeText(v.String())
		}
	}
	fmt.Fprintf(w, layout, args...)
}

// jsonFailed reports the answer of a command that only reads (list, verify, status) that
// could not be written to stdout, and returns the failure exit code: the answer is cut.
func jsonFailed(stderr io.Writer, cmd string, err error) int {
	sayf(stderr, "backup %s: writing JSON to stdout: %v\n", cmd, cause(err))
	return exitFailed
}

// tableFailed reports the table of a command that only answers (status, sets) that could
// not be written to stdout: the answer is lost, which exit 1 says, as list's does.
func tableFailed(stderr io.Writer, cmd string, err error) {
	sayf(stderr, "backup %s: writing to stdout: %v\n", cmd, cause(err))
}

// firstErrWriter keeps the first error of the writes to w, and writes nothing after it: a
// table cut short is told once, after it.
type firstErrWriter struct {
	w   io.Writer
	err error
}

func (f *firstErrWriter) Write(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	n, err := f.w.Write(p)
	f.err = err
	return n, err
}

// outputCut reports a --json or --json-lines answer (flag) that could not be written to
// stdout by a command whose work is done by then (restore, prune, adopt, activate, as
// create): the work stands, and so does the exit code that says what it was; only this line
// says that the reader did not get the answer.
func outputCut(stderr io.Writer, cmd, flag string, err error) {
	sayf(stderr, "backup %s: writing %s to stdout: %v\n", cmd, flag, cause(err))
}

// acquireFor is how a command takes a set's lock: a dry run reads a set it cannot lock.
func acquireFor(dryRun bool) func(context.Context, backupset.Store, time.Duration) (*backupset.Lock, error) {
	if dryRun {
		return backupset.AcquireForDryRun
	}
	return backupset.Acquire
}

// takeLock takes the lock of the backup set st, waiting up to wait; acquire takes it:
// backupset.Acquire, or for a dry run AcquireForDryRun. On failure it prints one line
// starting with prefix ("backup", "backup prune") and returns nil, the exit code (4 locked,
// 130 interrupted while waiting, 1 anything else) and why, for a receipt or a --json that
// reports it.
func takeLock(ctx context.Context, st backupset.Store, wait time.Duration, prefix string, stderr io.Writer,
	acquire func(context.Context, backupset.Store, time.Duration) (*backupset.Lock, error)) (*backupset.Lock, int, error) {
	lock, err := acquire(ctx, st, wait)
	var locked *backupset.LockedError
	switch {
	case errors.As(err, &locked):
		err = fmt.Errorf("%s: %w", st.Location(), err)
		if wait > 0 { // read without the wait, the line would say the run gave up at once
			err = fmt.Errorf("%w (still, after --wait %s)", err, format.FormatDuration(wait))
		}
		sayf(stderr, "%s: %v\n", prefix, err)
		return nil, exitLocked, err
	case errors.Is(err, context.Canceled):
		sayf(stderr, "%s: interrupted while waiting for the set's lock\n", prefix)
		return nil, exitInterrupted, errInterrupted
	case err != nil:
		sayf(stderr, "%s: failed: %v\n", prefix, err)
		return nil, exitFailed, err
	}
	if t := lock.TookOver(); t != nil {
		sayf(stderr, "%s: %s: %s\n", prefix, st.Location(), takeoverText(t))
	}
	return lock, exitComplete, nil
}

// takeoverText says whose lock a run took over, and why it could: worth a line even with
// -q, as it says a run of the set died without cleaning up (what it left is removed next).
func takeoverText(t *backupset.Takeover) string {
	switch {
	case t.Owner.Pid == 0:
		return "took over a lock object that named no run"
	case t.Expired:
		return fmt.Sprintf("took over the lock of pid %d on %s, whose lease had expired", t.Owner.Pid, t.Owner.Host)
	}
	return fmt.Sprintf("took over the lock of pid %d on %s, which is no longer running", t.Owner.Pid, t.Owner.Host)
}

// releaseSet gives the set's lock up. A lock object taken over by another run while this one
// held it (it stalled past the lock's expiry) is worth a line: its changes were made on
// conditions, but the user should know two runs overlapped.
func releaseSet(lock *backupset.Lock, prefix string, stderr io.Writer) {
	if err := lock.Release(); err != nil {
		sayf(stderr, "%s: %s: %v\n", prefix, lock.Store().Location(), err)
	}
}

// setError renders an error about a set for the one line a command prints, naming the
// folder of an empty set.
func setError(dir string, err error) string {
	if !errors.Is(err, backupset.ErrNoBackup) {
		return err.Error()
	}
	line := "no backup in " + dir + " yet"
	// A bucket holds no archive that can be named the way a file can: s3://B/P/NAME.zip is
	// read as a set of that name, which is empty.
	if base := path.Base(strings.TrimSuffix(dir, "/")); strings.HasPrefix(dir, s3store.Scheme) && backupset.IsArchiveName(base) {
		line += fmt.Sprintf(" (%s names a set, and %s is an archive's name: give its set, %s, which reads the archive LATEST names)",
			dir, format.Quote(base), strings.TrimSuffix(strings.TrimSuffix(dir, "/"), "/"+base))
	}
	return line
}

// readFailed reports an archive that could not be read at all, or an interrupted read.
func readFailed(ctx context.Context, stderr io.Writer, cmd, path string, err error) int {
	if ctx.Err() != nil {
		sayf(stderr, "backup %s: interrupted\n", cmd)
		return exitInterrupted
	}
	sayf(stderr, "backup %s: %s: %s\n", cmd, format.QuoteName(path), cause(err).Error())
	return exitFailed
}

// isTerminal reports whether w is a terminal, where a progress bar may be drawn.
func isTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr }) // an *os.File, or create's stderr around one
	return ok && term.IsTerminal(int(f.Fd()))
}

// capLines keeps the first report.MaxListed lines, as create's summary does, and says how
// many more there are and which flag (all: "--all", "--json") shows them all.
func capLines(lines []string, all string) []string {
	if len(lines) <= report.MaxListed {
		return lines
	}
	return append(lines[:report.MaxListed:report.MaxListed], fmt.Sprintf("  and %d more (%s lists them all)", len(lines)-report.MaxListed, all))
}
