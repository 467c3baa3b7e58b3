package hooks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"backup/format"
)

// DefaultTimeout bounds a hook when the user gives no timeout: a ping that hangs must not
// hold the set's lock until the next run.
const DefaultTimeout = 5 * time.Minute

// Commands are a run's hooks: the shell commands it runs before it begins and after it ends.
type Commands struct {
	Before, After []string
	Timeout       time.Duration // how long each hook may run before its process group is killed
}

// Env is what a hook learns of the run, as BACKUP_* variables. Empty values are set too,
// so that a hook can tell "no archive" from an unset variable.
type Env struct {
	Command  string // BACKUP_COMMAND: create or prune
	ExitCode int    // BACKUP_EXIT_CODE: the run's exit code; 0 before it
	Status   string // BACKUP_STATUS: complete, incomplete, locked, interrupted or failed; "" before
	Set      string // BACKUP_SET: the backup set's folder or bucket
	Archive  string // BACKUP_ARCHIVE: the archive the run wrote, if any
	Receipt  string // BACKUP_RECEIPT: its receipt, if any
	Error    string // BACKUP_ERROR: what made the run fail, if anything
}

func (e Env) vars() []string {
	return []string{
		"BACKUP_COMMAND=" + e.Command,
		"BACKUP_EXIT_CODE=" + strconv.Itoa(e.ExitCode),
		"BACKUP_STATUS=" + e.Status,
		"BACKUP_SET=" + e.Set,
		"BACKUP_ARCHIVE=" + e.Archive,
		"BACKUP_RECEIPT=" + e.Receipt,
		"BACKUP_ERROR=" + e.Error,
	}
}

// ChildOutput is a stderr that names what a hook's output goes to instead of itself: the
// file it wraps while it works (so the hook writes to it directly, not through a pipe the
// run must copy), or nil (the null device) once a write to it failed.
type ChildOutput interface {
	ForChild() io.Writer
}

// RunBefore runs the before hooks in order, and stops at the first that fails: its error
// names the hook and why it failed. It returns the hooks that ran.
func (h Commands) RunBefore(ctx context.Context, env Env, stderr io.Writer) ([]format.Hook, error) {
	var done []format.Hook
	for _, cmd := range h.Before {
		r := run(ctx, "before", cmd, env.vars(), h.Timeout, stderr)
		done = append(done, r)
		if r.Error != "" {
			return done, fmt.Errorf("--exec-before %q: %s%s", cmd, r.Error, timeoutHint(r))
		}
	}
	return done, nil
}

// RunAfter runs every after hook, whatever the others did, and warns on stderr, after
// prefix, of each that failed: a hook never changes the run's outcome. It runs on a fresh
// context, since an interrupted run must still report.
func (h Commands) RunAfter(prefix string, env Env, stderr io.Writer) []format.Hook {
	var done []format.Hook
	for _, cmd := range h.After {
		r := run(context.Background(), "after", cmd, env.vars(), h.Timeout, stderr)
		if r.Error != "" {
			fmt.Fprintf(stderr, "%s: --exec-after %q: %s%s\n", prefix, cmd, r.Error, timeoutHint(r))
		}
		done = append(done, r)
	}
	return done
}

// timedOut begins the Error of a hook killed at the timeout.
const timedOut = "timed out after "

// timeoutHint is what the line of a hook killed at its timeout adds: the flag that gives it
// longer, which the line's "timed out after 5m" does not name. The receipt keeps the Error.
func timeoutHint(h format.Hook) string {
	if strings.HasPrefix(h.Error, timedOut) {
		return " (--exec-timeout gives hooks longer)"
	}
	return ""
}

// run runs cmd with sh -c, stdin closed (/dev/null), no terminal and its output on stderr,
// env added to ours. The hook and everything it started are killed at the timeout, and what it left
// running when it ends. Its exit code is -1 when it could not be started or was killed.
func run(ctx context.Context, when, cmd string, env []string, timeout time.Duration, stderr io.Writer) format.Hook {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c := exec.CommandContext(ctx, "/bin/sh", "-c", cmd)
	c.Env = append(os.Environ(), env...)
	out := stderr
	if s, ok := stderr.(ChildOutput); ok {
		out = s.ForChild()
	}
	c.Stdout, c.Stderr = out, out
	// Its own session, so its own process group, which a timeout kills with what the shell
	// started (curl); and no terminal: on backup's, a hook's group would be in the
	// background, and the kernel would stop a hook that sets the terminal's modes (sudo's
	// password prompt) until the timeout, where without one it fails at once.
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	c.WaitDelay = time.Second // a grandchild holding our stderr open must not hold us
	err := c.Start()
	if err == nil {
		running.Store(c.Process.Pid, struct{}{})
		err = c.Wait()
		// What the hook left running (`cmd &`) would hold our stderr open after we exit,
		// bound by no timeout: it dies with the hook. setsid starts what must outlive it.
		syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		running.Delete(c.Process.Pid)
	}
	h := format.Hook{When: when, Command: cmd, ExitCode: c.ProcessState.ExitCode()}
	var exit *exec.ExitError
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		h.ExitCode, h.Error = -1, timedOut+format.FormatDuration(timeout)
	case ctx.Err() != nil:
		h.ExitCode, h.Error = -1, "interrupted"
	case errors.As(err, &exit) && h.ExitCode >= 0:
		h.Error = err.Error()
	case err != nil:
		h.ExitCode, h.Error = -1, err.Error()
	}
	return h
}

// running holds the process group (its leader's pid) of each hook running now.
var running sync.Map

// KillRunning kills the process group of every hook running now. A process that exits at
// once (on a second signal) calls it first: a hook's group is of its own, so it would
// outlive backup, bound by no timeout.
func KillRunning() {
	running.Range(func(pid, _ any) bool {
		syscall.Kill(-pid.(int), syscall.SIGKILL)
		return true
	})
}
