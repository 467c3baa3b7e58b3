package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRestoreInterruptedSaysUndo: SIGINT or SIGTERM while restore --force is held on entering
// its first rename into DEST/app/z (app/f1, f2 and f3 replaced, z/f4 checked and about to
// be). It once said "interrupted after 3 files" with z/f4 in place too (the file renamed
// into place when the signal came was not counted, in --json either) and nothing of the
// before-state: the user, with DEST half changed, was not told where the undo was. The count
// is what is in place, and the undo line follows, as after a run that ends.
func TestRestoreInterruptedSaysUndo(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			src, old := map[string]node{}, map[string]node{}
			for i := 1; i <= 5; i++ {
				src[fileOf(i)] = node{content: fmt.Sprintf("new %d\n", i)}
				old[fileOf(i)] = node{content: fmt.Sprintf("old %d\n", i)}
			}
			makeTree(t, filepath.Join(dir, "src/app"), src)
			arch := filepath.Join(dir, "a.zip")
			mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
			dest := filepath.Join(dir, "dest")
			makeTree(t, filepath.Join(dest, "app"), old)

			log := filepath.Join(dir, "strace.log")
			// By path: strace counts calls per thread, and the race build's renames run on many.
			cmd := exec.Command("strace", "-f", "-qq", "-o", log, "-P", filepath.Join(dest, "app/z"), "-e", "trace=renameat,renameat2",
				"-e", "inject=renameat,renameat2:delay_enter=1500000:when=1", binary, "restore", "--jobs", "1", "--force", "--json", "--undo-dir", dir, arch, dest)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waitForCall(t, log, func(c string) bool {
				return strings.Contains(c, "rename") && strings.Contains(c, ".f4.") && !returned(c)
			})
			signalChild(t, cmd.Process.Pid, sig)
			err := cmd.Wait()
			var exit *exec.ExitError
			if err != nil && !errors.As(err, &exit) {
				t.Fatal(err)
			}
			if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
				t.Fatalf("exit %d, want 130\n%s", code, stderr.String())
			}
			var out restoreJSON
			if err := json.Unmarshal([]byte(stdout.String()), &out); err != nil {
				t.Fatalf("--json: %v\n%s", err, stdout.String())
			}
			placed := 0
			for i := 1; i <= 5; i++ {
				data, _ := os.ReadFile(filepath.Join(dest, "app", fileOf(i)))
				if string(data) == fmt.Sprintf("new %d\n", i) {
					placed++
				}
			}
			if placed < 3 || placed > 4 {
				t.Fatalf("%d files replaced, want f1 to f3 and maybe f4", placed)
			}
			if out.Files != placed || out.Undo == nil {
				t.Errorf("--json says %d files, undo %v; want %d files and the before-state", out.Files, out.Undo, placed)
			}
			for _, want := range []string{fmt.Sprintf("backup restore: interrupted after %d files; no partial file left\n", placed),
				"backup restore: before-state saved in "} {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
				}
			}
			if got := listDir(t, dest); len(got) != 1 {
				t.Errorf("DEST holds %q, want app only (no journal)", got)
			}
		})
	}
}

// fileOf is the ith file of TestRestoreInterruptedSaysUndo's tree: f1 to f3 in app, the
// others in app/z, which the restore writes after.
func fileOf(i int) string {
	if i > 3 {
		return fmt.Sprintf("z/f%d", i)
	}
	return fmt.Sprintf("f%d", i)
}

// signalChild sends sig to the process strace (pid) runs: strace's only child.
func signalChild(t *testing.T, pid int, sig syscall.Signal) {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		t.Fatal(err)
	}
	var child int
	if _, err := fmt.Sscan(string(data), &child); err != nil {
		t.Fatalf("strace's child: %q: %v", data, err)
	}
	if err := syscall.Kill(child, sig); err != nil {
		t.Fatal(err)
	}
}

// TestRestoreKilledBeforeJournalHeader: a restore killed after it made its journal but
// before the journal's first line (strace kills it at the journal's flock; a journal is made
// for the temp names of --force, new files need none) left an empty
// .backup-restore-TOKEN.journal in DEST that every later restore passed over, for good: the
// sweep skipped a journal without its header. A journal of this user's that holds no more
// than the start of the header lists no temp name, and is removed.
func TestRestoreKilledBeforeJournalHeader(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"a": {content: "a\n"}, "b": {content: "b\n"}})
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	makeTree(t, filepath.Join(dest, "app"), map[string]node{"a": {content: "old\n"}})
	// Each write is held on entry: the journal's header is its first, and the restore is
	// killed while the journal is there, empty. (strace counts calls by thread, so the
	// journal's flock cannot be told from DEST's lock, taken first, by its count.)
	cmd := exec.Command("strace", "-f", "-qq", "-o", os.DevNull, "-e", "trace=write",
		"-e", "inject=write:delay_enter=3000000", binary, "restore", "-q", "--force", "--no-undo", arch, dest)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killGroup(cmd) })
	var journals []string
	for range 3000 {
		journals, _ = filepath.Glob(filepath.Join(dest, ".backup-restore-*.journal"))
		if len(journals) == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if len(journals) != 1 {
		t.Fatalf("journals %q, want one", journals)
	}
	if info, err := os.Stat(journals[0]); err != nil || info.Size() != 0 {
		t.Fatalf("journal %v, %v: want it empty", info, err)
	}
	signalChild(t, cmd.Process.Pid, syscall.SIGKILL)
	killGroup(cmd)
	if journals, _ := filepath.Glob(filepath.Join(dest, ".backup-restore-*.journal")); len(journals) != 1 {
		t.Fatalf("journals %q after the kill, want one", journals)
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "--force", "--no-undo", arch, dest), exitComplete)
	if got := listDir(t, dest); len(got) != 1 {
		t.Errorf("DEST holds %q after the next restore, want app only", got)
	}
}

// TestRestoreConcurrentBeforeStates: two restore --force runs at once into folders of one
// name (a/data, b/data) with one --undo-dir, as a script restoring hosts in parallel does.
// Both picked the same before-state name in the same second; the second failed, exit 1,
// nothing restored, "exists (use --force to replace it)" though --force was given. A name
// taken meanwhile makes the before-state take the next free one.
func TestRestoreConcurrentBeforeStates(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"f": {content: "new\n"}})
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	undo := filepath.Join(dir, "undo")
	os.Mkdir(undo, 0o755)
	for i := range 10 {
		var cmds []*exec.Cmd
		for _, host := range []string{"a", "b"} {
			dest := filepath.Join(dir, fmt.Sprint(i), host, "data")
			makeTree(t, filepath.Join(dest, "app"), map[string]node{"f": {content: "old\n"}})
			cmd := exec.Command(binary, "restore", "-q", "--force", "--undo-dir", undo, arch, dest)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			cmds = append(cmds, cmd)
		}
		for _, cmd := range cmds {
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
		}
		for _, cmd := range cmds {
			cmd.Wait()
			if code := cmd.ProcessState.ExitCode(); code != exitComplete {
				t.Fatalf("run %d: exit %d, want 0\n%s", i, code, cmd.Stderr)
			}
		}
	}
	if got, _ := filepath.Glob(filepath.Join(undo, "data-before-restore-*.zip")); len(got) != 20 {
		t.Errorf("%d before-states, want 20", len(got))
	}
	if got, _ := filepath.Glob(filepath.Join(undo, "*.receipt.json")); len(got) != 20 {
		t.Errorf("%d receipts, want 20", len(got))
	}
	noTemps(t, undo)
}

// TestRestorePlanInterrupted: SIGINT while the plan hashes a file DEST holds already (to
// tell whether it is present; strace slows every read of it to 50 ms, 64 reads). The plan
// once went on to the end of every such file, and of the whole tree, before the restore
// noticed: minutes on a large DEST, for a Ctrl-C that says stop. The plan stops at once,
// nothing is written, exit 130.
func TestRestorePlanInterrupted(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	big := strings.Repeat("0123456789abcdef", 2<<20/16) // 2 MiB: 64 reads of 32 KiB
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"big": {content: big}, "z": {content: "z\n"}})
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	makeTree(t, filepath.Join(dest, "app"), map[string]node{"big": {content: big}})

	log := filepath.Join(dir, "strace.log")
	cmd := exec.Command("strace", "-f", "-qq", "-o", log, "-P", filepath.Join(dest, "app/big"), "-e", "trace=read",
		"-e", "inject=read:delay_exit=50000:when=1+", binary, "restore", arch, dest)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForCall(t, log, func(c string) bool { return strings.Contains(c, "read(") && returned(c) })
	signalChild(t, cmd.Process.Pid, syscall.SIGINT)
	sent := time.Now()
	cmd.Wait()
	if took := time.Since(sent); took > 1500*time.Millisecond {
		t.Errorf("the restore stopped %v after SIGINT; want at once (the plan hashed on)", took.Round(time.Millisecond))
	}
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted || !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("exit %d, stderr %q; want 130 and interrupted", code, stderr.String())
	}
	if _, err := os.Lstat(filepath.Join(dest, "app/z")); err == nil {
		t.Error("app/z written after SIGINT")
	}
}

// TestRestoreUndoInterrupted: SIGINT while the undo of a restore reads a file that restore
// created (to remove it only if it still holds what was written; strace slows every read of
// it to 50 ms). The undo once read every such file to its end before it noticed. It stops
// at once, exit 130.
func TestRestoreUndoInterrupted(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	big := strings.Repeat("0123456789abcdef", 2<<20/16)
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"big": {content: big}, "f": {content: "new\n"}})
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	makeTree(t, filepath.Join(dest, "app"), map[string]node{"f": {content: "old\n"}})
	r := backup(t, runOpts{dir: dir}, "restore", "--force", "--json", "--undo-dir", dir, arch, dest)
	mustExit(t, r, exitComplete)
	undo := restoreJSONOf(t, r).Undo.Archive

	log := filepath.Join(dir, "strace.log")
	cmd := exec.Command("strace", "-f", "-qq", "-o", log, "-P", filepath.Join(dest, "app/big"), "-e", "trace=read",
		"-e", "inject=read:delay_exit=50000:when=1+", binary, "restore", "--force", "--no-undo", undo, dest)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForCall(t, log, func(c string) bool { return strings.Contains(c, "read(") && returned(c) })
	signalChild(t, cmd.Process.Pid, syscall.SIGINT)
	sent := time.Now()
	cmd.Wait()
	if took := time.Since(sent); took > 1500*time.Millisecond {
		t.Errorf("the undo stopped %v after SIGINT; want at once (it read on)", took.Round(time.Millisecond))
	}
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted || strings.Contains(stderr.String(), "warning") {
		t.Errorf("exit %d, stderr %q; want 130 without a warning", code, stderr.String())
	}
}
