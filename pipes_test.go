package main

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// closedPipeRun runs the binary in dir with stream ("stdout" or "stderr") a pipe whose
// reader is gone before the run starts, so that its first write there fails. It returns the
// exit code (128+N when signal N killed the process) and what went to the other stream.
func closedPipeRun(t *testing.T, dir, stream string, args ...string) (int, string) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	defer w.Close()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	var other bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, &other
	if stream == "stderr" {
		cmd.Stdout, cmd.Stderr = &other, w
	}
	err = cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); ws.Signaled() {
		return 128 + int(ws.Signal()), other.String()
	}
	return cmd.ProcessState.ExitCode(), other.String()
}

// TestEveryCommandClosedPipes: a reader of stdout or stderr that went away killed every
// command but create with SIGPIPE (exit 141): a prune's --exec-after hooks never
// ran, a restore with --json-lines died with its DEST half written. One rule now, for
// every command: no command dies of a closed pipe. What could not be printed on stderr is
// dropped; a command that changes something (restore, prune, adopt, activate) finishes, and
// a cut stdout is one line on stderr, the exit code saying what was done; one that only
// answers (list, verify, status) exits 1 when its answer on stdout was cut.
func TestEveryCommandClosedPipes(t *testing.T) {
	t.Parallel()
	dir, set, first, elsewhere := adoptSet(t)
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "app"), exitComplete)
	attic := filepath.Join(dir, "attic")
	os.Mkdir(attic, 0o755)
	hookMark := filepath.Join(dir, "hook-ran")
	tests := []struct {
		name   string
		stream string
		args   func(t *testing.T) []string
		want   int
		line   string // on stderr, when stdout was cut
		check  func(t *testing.T)
	}{
		{"restore stderr", "stderr", static("restore", arch, "r1"), exitComplete, "", func(t *testing.T) {
			assertContent(t, filepath.Join(dir, "r1/app/b"), "made on another host\n")
		}},
		{"restore --json stdout", "stdout", static("restore", "--json", arch, "r2"), exitComplete, "backup restore: writing --json to stdout: ", func(t *testing.T) {
			assertContent(t, filepath.Join(dir, "r2/app/b"), "made on another host\n")
		}},
		{"restore --json-lines stdout", "stdout", static("restore", "--json-lines", arch, "r3"), exitComplete, "backup restore: writing --json-lines to stdout: ", func(t *testing.T) {
			assertContent(t, filepath.Join(dir, "r3/app/b"), "made on another host\n")
			if got := listDir(t, filepath.Join(dir, "r3")); len(got) != 1 {
				t.Errorf("DEST holds %q, want app only (no journal left)", got)
			}
		}},
		{"list stdout", "stdout", static("list", arch), exitFailed, "backup list: writing to stdout: ", nil},
		{"list stderr", "stderr", static("list", arch), exitComplete, "", nil},
		{"list --json stdout", "stdout", static("list", "--json", arch), exitFailed, "backup list: writing JSON to stdout: ", nil},
		{"verify stderr", "stderr", static("verify", "--json", arch), exitComplete, "", nil},
		{"verify --json stdout", "stdout", static("verify", "--json", arch), exitFailed, "backup verify: writing JSON to stdout: ", nil},
		{"status stdout", "stdout", static("status", "--json", set), exitFailed, "backup status: writing JSON to stdout: ", nil},
		{"status stderr", "stderr", static("status", "--max-age", "1ns", set), exitFailed, "", nil},
		{"adopt --json stdout", "stdout", static("adopt", "--json", set, elsewhere), exitComplete, "backup adopt: writing --json to stdout: ", nil},
		{"activate stdout", "stdout", func(t *testing.T) []string { return []string{"activate", "--json", set, adopted(t, set, first)} }, exitComplete, "backup activate: writing --json to stdout: ", func(t *testing.T) {
			if got, want := readLatest(t, set), adopted(t, set, first); got != want {
				t.Errorf("LATEST %q, want %q", got, want)
			}
		}},
		{"prune --attic stdout", "stdout", static("prune", "--keep-last", "1", "--attic", attic, "--exec-after", "touch "+hookMark, "--json", set), exitComplete, "backup prune: writing --json to stdout: ", func(t *testing.T) {
			if _, err := os.Stat(hookMark); err != nil {
				t.Errorf("the --exec-after hook did not run: %v", err)
			}
			if got := listDir(t, attic); len(got) != 2 {
				t.Errorf("the attic holds %q, want one run (archive and receipt)", got)
			}
		}},
	}
	// In order: adopt, then activate and prune work on the set it leaves.
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, other := closedPipeRun(t, dir, tt.stream, tt.args(t)...)
			if code != tt.want {
				t.Fatalf("exit %d, want %d; other stream:\n%s", code, tt.want, other)
			}
			if tt.line != "" && !strings.Contains(other, tt.line) {
				t.Errorf("stderr %q lacks %q", other, tt.line)
			}
			if tt.check != nil {
				tt.check(t)
			}
		})
	}
}

// TestRestoreJSONLinesCut: `restore --json-lines ARCHIVE DEST | head -1`. The reader takes
// the first line and goes; strace holds the restore at its first link (the first file put
// in place) until the next progress event is due. It once died of SIGPIPE there: exit 141, DEST half restored, a temp
// file and the journal left. The restore now finishes, DEST whole and clean, exit 0, and one
// line on stderr says the stream was cut.
func TestRestoreJSONLinesCut(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"f1": {content: "1\n"}, "f2": {content: "2\n"}, "f3": {content: "3\n"}})
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("strace", "-f", "-qq", "-o", os.DevNull, "-e", "trace=linkat",
		"-e", "inject=linkat:delay_exit=2500000:when=1", binary, "restore", "--json-lines", arch, dest)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if line, err := bufio.NewReader(r).ReadString('\n'); err != nil || !strings.Contains(line, `"start"`) {
		t.Fatalf("first line %q, %v", line, err)
	}
	r.Close()
	cmd.Wait()
	if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); ws.Signaled() {
		t.Fatalf("killed by %v; stderr:\n%s", ws.Signal(), stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != exitComplete || !strings.Contains(stderr.String(), "backup restore: writing --json-lines to stdout: ") {
		t.Errorf("exit %d, stderr %q; want 0 and a line saying the stream was cut", code, stderr.String())
	}
	for _, f := range []string{"f1", "f2", "f3"} {
		assertContent(t, filepath.Join(dest, "app", f), f[1:]+"\n")
	}
	if got := listDir(t, dest); len(got) != 1 {
		t.Errorf("DEST holds %q, want app only (no journal left)", got)
	}
	if got := listDir(t, filepath.Join(dest, "app")); len(got) != 3 {
		t.Errorf("DEST/app holds %q, want f1 f2 f3 (no temp file left)", got)
	}
}

func static(args ...string) func(*testing.T) []string {
	return func(*testing.T) []string { return args }
}

// adopted is the name of the set's run that is not first.
func adopted(t *testing.T, set, first string) string {
	t.Helper()
	for _, name := range setArchives(t, set) {
		if name != first && strings.HasSuffix(name, ".zip") {
			return name
		}
	}
	t.Fatal("no adopted run in the set")
	return ""
}
