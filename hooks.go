package main

// --exec-before and --exec-after: commands a run starts before it begins and after it ends,
// for dumping a database first and for pinging a dead-man's switch or sending mail after.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"backup/format"
)

// defaultHookTimeout bounds a hook when --exec-timeout is not given: a ping that hangs must
// not hold the set's lock until the next run.
const defaultHookTimeout = 5 * time.Minute

// hookFlags are the hook flags of create and prune.
type hookFlags struct {
	before, after []string
	timeout       durationFlag
}

func addHookFlags(flags *pflag.FlagSet) *hookFlags {
	h := &hookFlags{timeout: durationFlag(defaultHookTimeout)}
	flags.StringArrayVar(&h.before, "exec-before", nil, "run `CMD` with sh -c first; if it fails, so does the run (exit 1, nothing written); repeatable")
	flags.StringArrayVar(&h.after, "exec-after", nil, "run `CMD` with sh -c after every outcome, with BACKUP_STATUS, BACKUP_EXIT_CODE… set; repeatable")
	flags.Var(&h.timeout, "exec-timeout", "stop a hook that runs longer than `DURATION`")
	return h
}

// runHook runs cmd with sh -c, stdin closed (/dev/null) and its output on our stderr (stdout
// carries --json), env added to ours. The hook and everything it started are killed at the
// timeout. Its exit code is -1 when it could not be started or was killed.
func runHook(ctx context.Context, when, cmd string, env []string, timeout time.Duration, stderr io.Writer) format.Hook {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c := exec.CommandContext(ctx, "/bin/sh", "-c", cmd)
	c.Env = append(os.Environ(), env...)
	out := stderr
	if s, ok := stderr.(*stopOnError); ok {
		out = s.forChild()
	}
	c.Stdout, c.Stderr = out, out
	// Its own process group, so that a timeout kills what the shell started too (curl).
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	c.WaitDelay = time.Second // a grandchild holding our stderr open must not hold us
	err := c.Run()
	h := format.Hook{When: when, Command: cmd, ExitCode: c.ProcessState.ExitCode()}
	var exit *exec.ExitError
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		h.ExitCode, h.Error = -1, "timed out after "+format.FormatDuration(timeout)
	case ctx.Err() != nil:
		h.ExitCode, h.Error = -1, "interrupted"
	case errors.As(err, &exit) && h.ExitCode >= 0:
		h.Error = err.Error()
	case err != nil:
		h.ExitCode, h.Error = -1, err.Error()
	}
	return h
}

// runBefore runs the --exec-before hooks in order, and stops at the first that fails.
func (h *hookFlags) runBefore(ctx context.Context, env []string, stderr io.Writer) ([]format.Hook, error) {
	var done []format.Hook
	for _, cmd := range h.before {
		r := runHook(ctx, "before", cmd, env, time.Duration(h.timeout), stderr)
		done = append(done, r)
		if r.Error != "" {
			return done, fmt.Errorf("--exec-before %q: %s", cmd, r.Error)
		}
	}
	return done, nil
}

// runAfter runs every --exec-after hook, whatever the others did, and warns on stderr of
// each that failed: a hook never changes the run's exit code. It runs on a fresh context,
// since an interrupted run must still report.
func (h *hookFlags) runAfter(prefix string, env []string, stderr io.Writer) []format.Hook {
	var done []format.Hook
	for _, cmd := range h.after {
		r := runHook(context.Background(), "after", cmd, env, time.Duration(h.timeout), stderr)
		if r.Error != "" {
			fmt.Fprintf(stderr, "%s: --exec-after %q: %s\n", prefix, cmd, r.Error)
		}
		done = append(done, r)
	}
	return done
}

// hookEnv is what a hook learns of the run, as BACKUP_* variables; empty values are set
// too, so that a hook can tell "no archive" from an unset variable.
func hookEnv(command string, code int, status, set, archive, receipt, errText string) []string {
	return []string{
		"BACKUP_COMMAND=" + command,
		"BACKUP_EXIT_CODE=" + strconv.Itoa(code),
		"BACKUP_STATUS=" + status,
		"BACKUP_SET=" + set,
		"BACKUP_ARCHIVE=" + archive,
		"BACKUP_RECEIPT=" + receipt,
		"BACKUP_ERROR=" + errText,
	}
}

// outcome names what an exit code means, for hooks and metrics: complete, incomplete,
// locked, interrupted or failed.
func outcome(code int) string {
	switch code {
	case exitComplete:
		return string(format.Complete)
	case exitIncomplete:
		return string(format.Incomplete)
	case exitLocked:
		return "locked"
	case exitInterrupted:
		return "interrupted"
	}
	return string(format.Failed)
}
