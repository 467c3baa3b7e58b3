package hooks

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRunBefore: the before hooks run in order and stop at the first that fails, whose
// error names it; the hooks after it never start.
func TestRunBefore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := Commands{Before: []string{"true", "exit 3", "touch " + filepath.Join(dir, "ran")}, Timeout: time.Minute}
	ran, err := h.RunBefore(t.Context(), Env{Command: "create"}, io.Discard)
	if want := `--exec-before "exit 3": exit status 3`; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
	if len(ran) != 2 || ran[0].ExitCode != 0 || ran[1].ExitCode != 3 || ran[1].When != "before" {
		t.Errorf("hooks %+v; want two before hooks, exit codes 0 and 3", ran)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Error("the hook after the failed one ran")
	}
}

// TestRunAfter: every after hook runs whatever the others did, learns the run's outcome from
// BACKUP_* (empty ones set too), and a failed one is a warning on stderr.
func TestRunAfter(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "env")
	h := Commands{After: []string{"exit 7",
		`printf '%s|' "$BACKUP_COMMAND" "$BACKUP_EXIT_CODE" "$BACKUP_STATUS" "$BACKUP_SET" "${BACKUP_ARCHIVE-unset}" "$BACKUP_ERROR" > ` + out},
		Timeout: time.Minute}
	var stderr strings.Builder
	ran := h.RunAfter("backup prune", Env{Command: "prune", ExitCode: 3, Status: "incomplete", Set: "/set", Error: "lost a"}, &stderr)
	if want := "backup prune: --exec-after \"exit 7\": exit status 7\n"; stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
	if len(ran) != 2 || ran[0].ExitCode != 7 || ran[0].Error == "" || ran[1].ExitCode != 0 || ran[1].When != "after" {
		t.Errorf("hooks %+v; want two after hooks, exit codes 7 and 0", ran)
	}
	got, err := os.ReadFile(out)
	if want := "prune|3|incomplete|/set||lost a|"; err != nil || string(got) != want {
		t.Errorf("the hook saw %q (%v), want %q", got, err, want)
	}
}

// TestTimeoutKillsGroup: at the timeout the hook's whole process group is killed, a
// background child of the shell included, and the hook is recorded as timed out (-1).
func TestTimeoutKillsGroup(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	h := Commands{Before: []string{"sleep 60 & echo $! > " + pidFile + "; wait"}, Timeout: time.Second}
	start := time.Now()
	ran, err := h.RunBefore(t.Context(), Env{}, io.Discard)
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the hook held the run %v past a 1s timeout", took)
	}
	// The line names the flag that gives it longer; the receipt's record keeps the cause.
	if want := "timed out after 1s"; err == nil || !strings.HasSuffix(err.Error(), want+" (--exec-timeout gives hooks longer)") || len(ran) != 1 || ran[0].ExitCode != -1 || ran[0].Error != want {
		t.Fatalf("error %v, hooks %+v; want one hook, -1, %q", err, ran, want)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	for deadline := time.Now().Add(5 * time.Second); alive(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the hook's background sleep (pid %d) outlived the timeout", pid)
		}
	}
}

// alive says whether pid is a process that has not exited (a zombie waiting for its reaper
// has).
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, after, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(after, "Z")
}

// TestInterrupted: a run interrupted while a before hook runs kills it and records why.
func TestInterrupted(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(200*time.Millisecond, cancel)
	ran, err := Commands{Before: []string{"sleep 60"}, Timeout: time.Minute}.RunBefore(ctx, Env{}, io.Discard)
	if err == nil || len(ran) != 1 || ran[0].ExitCode != -1 || ran[0].Error != "interrupted" {
		t.Errorf("error %v, hooks %+v; want one hook, -1, interrupted", err, ran)
	}
}

// failedStderr is a stderr whose writes failed: it hands hooks the null device.
type failedStderr struct{ writes int }

func (f *failedStderr) Write(p []byte) (int, error) { f.writes++; return len(p), nil }
func (f *failedStderr) ForChild() io.Writer         { return nil }

// TestChildOutput: a hook's output goes where the stderr's ForChild says, not through the
// stderr itself (nil: the null device, and the hook still succeeds).
func TestChildOutput(t *testing.T) {
	t.Parallel()
	var stderr failedStderr
	ran := Commands{After: []string{"echo to stdout; echo to stderr >&2"}, Timeout: time.Minute}.RunAfter("backup", Env{}, &stderr)
	if len(ran) != 1 || ran[0].ExitCode != 0 || stderr.writes != 0 {
		t.Errorf("hooks %+v, %d writes to stderr; want exit 0 and none", ran, stderr.writes)
	}
}
