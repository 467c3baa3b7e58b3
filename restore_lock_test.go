package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// lockFixture is an archive of app/{a,b,new}, and DEST holding app/a and app/b with other
// content: a restore --force into it replaces both, creates app/new and writes a
// before-state.
type lockFixture struct {
	dir, arch, dest string
}

func newLockFixture(t *testing.T) lockFixture {
	t.Helper()
	dir := sharedTempDir(t)
	f := lockFixture{dir: dir, arch: filepath.Join(dir, "app.zip"), dest: filepath.Join(dir, "dest")}
	makeTree(t, filepath.Join(dir, "src"), map[string]node{"app/a": {content: "archived a\n"}, "app/b": {content: "archived b\n"}, "app/new": {content: "new\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-o", f.arch, filepath.Join(dir, "src", "app")), exitComplete)
	makeTree(t, f.dest, map[string]node{"app/a": {content: "user's a\n"}, "app/b": {content: "user's b\n"}})
	return f
}

// destState lists what a tree holds: each path's type, mode, mtime, size and inode.
func destState(t *testing.T, dir string) string {
	t.Helper()
	out, err := exec.Command("find", dir, "-printf", `%P %y %#m %T@ %s %i\n`).CombinedOutput()
	if err != nil {
		t.Fatalf("find %s: %v\n%s", dir, err, out)
	}
	return string(out)
}

// contentState lists what a tree holds below its top, as an undo puts it back: each path's
// type, mode, mtime, size and content, not inode numbers (a file put back is a new one), nor
// the top folder's mtime.
func contentState(t *testing.T, dir string) string {
	t.Helper()
	out, err := exec.Command("find", dir, "-mindepth", "1", "-printf", `%P %y %#m %T@ %s\n`).CombinedOutput()
	if err != nil {
		t.Fatalf("find %s: %v\n%s", dir, err, out)
	}
	var b strings.Builder
	b.Write(out)
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			data, _ := os.ReadFile(path)
			fmt.Fprintf(&b, "%s: %q\n", strings.TrimPrefix(path, dir), data)
		}
		return nil
	})
	return b.String()
}

// heldRestore starts restore --force --json ARCHIVE DEST under strace, held for hold on the
// exit of its first flock (the lock on DEST taken), and waits until the kernel lists DEST's
// flock as held. wait returns its result.
func heldRestore(t *testing.T, dir, arch, dest string, hold time.Duration) (wait func() result) {
	t.Helper()
	mustRoot(t)
	mustTool(t, "strace")
	var st syscall.Stat_t
	if err := syscall.Stat(dest, &st); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("strace", "-f", "-o", "/dev/null", "-e", "trace=flock",
		"-e", fmt.Sprintf("inject=flock:delay_exit=%d:when=1", hold.Microseconds()),
		binary, "restore", "--force", "--json", arch, dest)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killGroup(cmd) })
	waitForFlock(t, st.Ino)
	return func() result {
		t.Helper()
		cmd.Wait()
		return result{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
	}
}

// waitForFlock waits until /proc/locks lists a FLOCK on the inode ino.
func waitForFlock(t *testing.T, ino uint64) {
	t.Helper()
	for range 3000 {
		if flockHeld(ino) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no flock on inode %d", ino)
}

func flockHeld(ino uint64) bool {
	data, _ := os.ReadFile("/proc/locks")
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) > 5 && fields[1] == "FLOCK" && strings.HasSuffix(fields[5], fmt.Sprintf(":%d", ino)) {
			return true
		}
	}
	return false
}

// checkFirstRestore checks the held restore's end: exit 0, DEST holds the archive, and its
// before-state holds the user's a and b and nothing else; undoing it gives DEST back.
func checkFirstRestore(t *testing.T, f lockFixture, dest string, r result, content string) {
	t.Helper()
	out := restoreJSONOf(t, r)
	if r.code != exitComplete || out.Undo == nil || out.Files != 3 {
		t.Fatalf("held restore: exit %d, files %d, undo %v; want 0, 3, a before-state\n%s", r.code, out.Files, out.Undo, r.stderr)
	}
	assertContent(t, filepath.Join(dest, "app/new"), "new\n")
	held := readZipGo(t, out.Undo.Archive)
	if held["app/a"] != "user's a\n" || held["app/b"] != "user's b\n" {
		t.Errorf("before-state holds %q, %q; want the user's a and b", held["app/a"], held["app/b"])
	}
	if _, ok := held["app/new"]; ok {
		t.Error("before-state holds app/new, which was not there")
	}
	mustExit(t, backup(t, runOpts{dir: f.dir}, "restore", "--force", out.Undo.Archive, dest), exitComplete)
	if got := contentState(t, dest); got != content {
		t.Errorf("after the undo DEST is\n%s\nwant\n%s", got, content)
	}
}

// TestRestoreLockRefusesSecond: a restore --force into DEST held just after it took DEST's
// lock; a second restore into DEST, by each path that leads to the same folder (DEST, a
// symlink to it, DEST/., DEST/../dest, a bind mount of it; with --include, --jobs), exits 4 at once with one line,
// writes nothing (no before-state either), and the first ends complete with a before-state
// of the user's files only; the second then succeeds. Without the lock the second ran into
// the first and its before-state recorded the first's files as the user's.
func TestRestoreLockRefusesSecond(t *testing.T) {
	t.Parallel()
	for _, form := range []string{"same", "symlink", "dot", "dotdot", "bind", "include", "jobs"} {
		t.Run(form, func(t *testing.T) {
			t.Parallel()
			f := newLockFixture(t)
			other, extra := f.dest, []string{}
			switch form {
			case "include":
				extra = []string{"--include", "app/a"}
			case "jobs":
				extra = []string{"--jobs", "4"}
			case "symlink":
				other = filepath.Join(f.dir, "link")
				if err := os.Symlink("dest", other); err != nil {
					t.Fatal(err)
				}
			case "dot":
				other = f.dest + "/."
			case "dotdot":
				other = f.dest + "/../dest"
			case "bind":
				mustRoot(t)
				other = filepath.Join(f.dir, "bound")
				if err := os.Mkdir(other, 0o755); err != nil {
					t.Fatal(err)
				}
				if out, err := exec.Command("mount", "--bind", f.dest, other).CombinedOutput(); err != nil {
					t.Fatalf("mount --bind: %v %s", err, out)
				}
				t.Cleanup(func() { exec.Command("umount", "-l", other).Run() })
			}
			before, content := destState(t, f.dest), contentState(t, f.dest)
			wait := heldRestore(t, f.dir, f.arch, f.dest, 5*time.Second)
			r := backup(t, runOpts{dir: f.dir}, append(append([]string{"restore", "--force"}, extra...), f.arch, other)...)
			named := other
			if form == "dotdot" {
				named = f.dest // as the kernel resolves it, the way every restore line names DEST
			}
			want := fmt.Sprintf("backup restore: %s: another restore is writing into it; try again when it ends\n", named)
			if r.code != exitLocked || r.stderr != want {
				t.Errorf("second restore: exit %d, stderr %q; want 4, %q", r.code, r.stderr, want)
			}
			if got := destState(t, f.dest); got != before {
				t.Errorf("the refused restore changed DEST:\n%s\nwant\n%s", got, before)
			}
			if undo, _ := filepath.Glob(filepath.Join(f.dir, "*before*")); len(undo) > 0 {
				t.Errorf("the refused restore wrote %v", undo)
			}
			checkFirstRestore(t, f, f.dest, wait(), content)
			mustExit(t, backup(t, runOpts{dir: f.dir}, "restore", "--force", "--no-undo", f.arch, other), exitComplete)
		})
	}
}

// TestRestoreLockJSON: the refused restore's --json says status "locked" and the line's
// cause.
func TestRestoreLockJSON(t *testing.T) {
	t.Parallel()
	f := newLockFixture(t)
	wait := heldRestore(t, f.dir, f.arch, f.dest, 5*time.Second)
	r := backup(t, runOpts{dir: f.dir}, "restore", "--force", "--json", f.arch, f.dest)
	out := restoreJSONOf(t, r)
	if r.code != exitLocked || out.Status != "locked" || !strings.HasSuffix(out.Error, "another restore is writing into it; try again when it ends") {
		t.Errorf("exit %d, status %q, error %q; want 4, locked, the cause", r.code, out.Status, out.Error)
	}
	mustExit(t, wait(), exitComplete)
}

// TestRestoreLockDestRenamed: DEST renamed while the first restore holds it, and a new folder
// made at its path: a second restore into the path writes into the new folder, which is
// free. The first, whose plan read the folder it locked, finds that DEST's path leads
// elsewhere before its before-state reads DEST by that path: it fails, exit 1, nothing
// written anywhere, rather than save the new folder's files as the ones it replaces.
func TestRestoreLockDestRenamed(t *testing.T) {
	t.Parallel()
	f := newLockFixture(t)
	wait := heldRestore(t, f.dir, f.arch, f.dest, 5*time.Second)
	moved := filepath.Join(f.dir, "moved")
	if err := os.Rename(f.dest, moved); err != nil {
		t.Fatal(err)
	}
	before := destState(t, moved)
	if err := os.Mkdir(f.dest, 0o755); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: f.dir}, "restore", "--force", "--no-undo", f.arch, f.dest)
	mustExit(t, r, exitComplete)
	assertContent(t, filepath.Join(f.dest, "app/a"), "archived a\n")
	first := wait()
	out := restoreJSONOf(t, first)
	want := "before-state: " + f.dest + " was moved or replaced while the restore held it; nothing restored (--no-undo restores without one)"
	if first.code != exitFailed || out.Error != want {
		t.Errorf("held restore: exit %d, error %q; want 1, %q", first.code, out.Error, want)
	}
	if got := destState(t, moved); got != before {
		t.Errorf("the held restore changed the folder it locked:\n%s\nwant\n%s", got, before)
	}
	if undo, _ := filepath.Glob(filepath.Join(f.dir, "*before*")); len(undo) > 0 {
		t.Errorf("the held restore left %v", undo)
	}
}

// TestRestoreLockDestRenamedNoUndo: with --no-undo nothing reads DEST by its path: the held
// restore, DEST renamed under it, writes into the folder it locked (and the second restore
// into the new folder at the path).
func TestRestoreLockDestRenamedNoUndo(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "strace")
	f := newLockFixture(t)
	var st syscall.Stat_t
	if err := syscall.Stat(f.dest, &st); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("strace", "-f", "-o", "/dev/null", "-e", "trace=flock",
		"-e", "inject=flock:delay_exit=5000000:when=1", binary, "restore", "--force", "--no-undo", f.arch, f.dest)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killGroup(cmd) })
	waitForFlock(t, st.Ino)
	moved := filepath.Join(f.dir, "moved")
	if err := os.Rename(f.dest, moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(f.dest, 0o755); err != nil {
		t.Fatal(err)
	}
	mustExit(t, backup(t, runOpts{dir: f.dir}, "restore", f.arch, f.dest), exitComplete)
	if err := cmd.Wait(); err != nil {
		t.Errorf("held restore: %v", err)
	}
	for _, d := range []string{moved, f.dest} {
		assertContent(t, filepath.Join(d, "app/new"), "new\n")
		assertContent(t, filepath.Join(d, "app/a"), "archived a\n")
	}
}

// TestRestoreLockUndoAgainstRestore: the undo of a restore (a restore of its before-state)
// held while it holds DEST; a restore into DEST meanwhile is refused, exit 4, and the undo
// gives DEST back as it was.
func TestRestoreLockUndoAgainstRestore(t *testing.T) {
	t.Parallel()
	f := newLockFixture(t)
	content := contentState(t, f.dest)
	r := backup(t, runOpts{dir: f.dir}, "restore", "--force", "--json", f.arch, f.dest)
	out := restoreJSONOf(t, r)
	if r.code != exitComplete || out.Undo == nil {
		t.Fatalf("restore: exit %d\n%s", r.code, r.stderr)
	}
	wait := heldRestore(t, f.dir, out.Undo.Archive, f.dest, 5*time.Second)
	mid := destState(t, f.dest)
	r = backup(t, runOpts{dir: f.dir}, "restore", "--force", "--no-undo", f.arch, f.dest)
	if r.code != exitLocked || !strings.Contains(r.stderr, "another restore is writing into it") {
		t.Errorf("restore during the undo: exit %d, stderr %q; want 4", r.code, r.stderr)
	}
	if got := destState(t, f.dest); got != mid {
		t.Errorf("the refused restore changed DEST")
	}
	undo := wait()
	if undo.code != exitComplete {
		t.Fatalf("undo: exit %d\n%s", undo.code, undo.stderr)
	}
	if got := contentState(t, f.dest); got != content {
		t.Errorf("after the undo DEST is\n%s\nwant\n%s", got, content)
	}
}

// TestRestoreLockRefusedByFS: a file system that refuses flock on a folder (EOPNOTSUPP,
// ENOLCK) leaves restore as it was: it goes on without the lock, complete, exit 0. strace
// injects the error into each thread's first flock, which may be the journal's too (it says
// so in a warning, as before): the restore's own, on DEST, is the one checked for.
func TestRestoreLockRefusedByFS(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	for _, errno := range []string{"EOPNOTSUPP", "ENOLCK"} {
		t.Run(errno, func(t *testing.T) {
			t.Parallel()
			f := newLockFixture(t)
			log := filepath.Join(f.dir, "strace.log")
			cmd := exec.Command("strace", "-f", "-y", "-o", log, "-e", "trace=flock",
				"-e", "inject=flock:error="+errno+":when=1", binary, "restore", "--force", "--no-undo", f.arch, f.dest)
			cmd.Dir = f.dir
			r := runCmd(t, cmd)
			want := "backup restore: complete: 3 files, 1 dir, 26 B restored to " + f.dest + " (status recorded at backup: complete)\n"
			if r.code != exitComplete || !strings.HasSuffix(r.stderr, want) {
				t.Errorf("exit %d, stderr %q; want 0, ending %q", r.code, r.stderr, want)
			}
			assertContent(t, filepath.Join(f.dest, "app/a"), "archived a\n")
			data, _ := os.ReadFile(log)
			refused := false
			for _, call := range straceCalls(string(data)) {
				refused = refused || strings.Contains(call, "flock(") && strings.Contains(call, "<"+f.dest+">, LOCK_EX|LOCK_NB)") && strings.Contains(call, errno+" ")
			}
			if !refused {
				t.Errorf("no flock of DEST refused with %s in:\n%s", errno, data)
			}
		})
	}
}

// TestAttackRestoreLockHeldByReader: any user who may read DEST may open and flock it. nobody
// holding root's DEST (0755, root's) with flock(1) would have refused every restore into it,
// exit 4, for as long as he liked; his lock is no restore's (he cannot write there): the
// restore goes on without it, saying so. A holder who may write there (DEST's owner) is
// respected.
func TestAttackRestoreLockHeldByReader(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "flock")
	mustTool(t, "setpriv")
	f, st := readableLockFixture(t)
	hold := func() *exec.Cmd { return holdAsNobody(t, st.Ino, "flock", f.dest, "sleep", "60") }
	holder := hold()
	r := backup(t, runOpts{dir: f.dir}, "restore", "--force", "--no-undo", "--json", f.arch, f.dest)
	killGroup(holder)
	out := restoreJSONOf(t, r)
	if r.code != exitComplete || !strings.Contains(r.stderr, "which cannot write into it") ||
		len(out.Warnings) != 1 || !strings.Contains(out.Warnings[0].Reason, "which cannot write into it") {
		t.Errorf("restore while nobody holds root's DEST: exit %d, stderr %q, warnings %+v; want 0 and a warning in both", r.code, r.stderr, out.Warnings)
	}
	assertContent(t, filepath.Join(f.dest, "app/a"), "archived a\n")

	if err := os.Chown(f.dest, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	for flockHeld(st.Ino) {
		time.Sleep(10 * time.Millisecond)
	}
	holder = hold()
	defer killGroup(holder)
	r = backup(t, runOpts{dir: f.dir}, "restore", "--force", "--no-undo", f.arch, f.dest)
	if r.code != exitLocked {
		t.Errorf("restore while DEST's owner holds it: exit %d, stderr %q; want 4", r.code, r.stderr)
	}
}

// TestAttackRestoreLockHolderKilled: a restore killed (SIGKILL) or interrupted (SIGINT) while
// it holds DEST leaves no lock behind: the next restore runs at once.
func TestAttackRestoreLockHolderKilled(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			mustRoot(t)
			mustTool(t, "strace")
			f := newLockFixture(t)
			var st syscall.Stat_t
			if err := syscall.Stat(f.dest, &st); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(binary, "restore", "--force", "--no-undo", f.arch, f.dest)
			delay := "60000000"
			if sig == syscall.SIGINT {
				delay = "2000000" // the interrupt is seen once the flock returns
			}
			strace := exec.Command("strace", append([]string{"-f", "-o", "/dev/null", "-e", "trace=flock",
				"-e", "inject=flock:delay_exit=" + delay + ":when=1"}, cmd.Args...)...)
			strace.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := strace.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { killGroup(strace) })
			waitForFlock(t, st.Ino)
			// The binary is strace's child; signal it, not strace.
			out, _ := exec.Command("pgrep", "-P", fmt.Sprint(strace.Process.Pid)).Output()
			var pid int
			fmt.Sscan(string(out), &pid)
			if pid == 0 {
				t.Fatal("no restore under strace")
			}
			syscall.Kill(pid, sig)
			if sig == syscall.SIGINT {
				strace.Wait()
				if code := strace.ProcessState.ExitCode(); code != exitInterrupted {
					t.Errorf("interrupted restore: exit %d, want 130", code)
				}
			}
			killGroup(strace)
			for range 300 {
				if !flockHeld(st.Ino) {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			mustExit(t, backup(t, runOpts{dir: f.dir}, "restore", "--force", "--no-undo", f.arch, f.dest), exitComplete)
		})
	}
}

// TestAttackRestoreLockRace: two real restore --force runs started together into one DEST,
// 20 times: each ends complete or refused (exit 4), never both refused, and a before-state
// holds the user's files only, never the other run's (which undoing it would then keep, and
// its record of what it created remove).
func TestAttackRestoreLockRace(t *testing.T) {
	t.Parallel()
	for i := range 20 {
		f := newLockFixture(t)
		if raceRestores(t, f, i) == 0 {
			t.Errorf("run %d: both refused", i)
		}
	}
}

// readableLockFixture is newLockFixture whose DEST nobody may reach and read (not write):
// a reader who may flock it. It returns DEST's stat too.
func readableLockFixture(t *testing.T) (lockFixture, syscall.Stat_t) {
	t.Helper()
	f := newLockFixture(t)
	if err := os.Chmod(f.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(f.dest, &st); err != nil {
		t.Fatal(err)
	}
	return f, st
}

// holdAsNobody starts args as nobody, in a process group of its own (killGroup ends it),
// and waits until a flock on the inode ino is held.
func holdAsNobody(t *testing.T, ino uint64, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("setpriv", append([]string{"--reuid=65534", "--regid=65534", "--clear-groups"}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForFlock(t, ino)
	return cmd
}

// raceRestores starts two restore --force runs together into f's DEST and checks round i:
// each ends complete or refused (exit 4), and a before-state holds the user's files only,
// never the other run's. It returns how many ended complete.
func raceRestores(t *testing.T, f lockFixture, i int) int {
	t.Helper()
	var cmds []*exec.Cmd
	var outs []*strings.Builder
	for range 2 {
		cmd := exec.Command(binary, "restore", "--force", "--json", f.arch, f.dest)
		var stdout strings.Builder
		cmd.Stdout, cmd.Dir = &stdout, f.dir
		cmds, outs = append(cmds, cmd), append(outs, &stdout)
	}
	for _, cmd := range cmds {
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	complete := 0
	for j, cmd := range cmds {
		cmd.Wait()
		code := cmd.ProcessState.ExitCode()
		if code != exitComplete && code != exitLocked {
			t.Errorf("run %d.%d: exit %d, want 0 or 4\n%s", i, j, code, outs[j])
			continue
		}
		out := restoreJSONOf(t, result{code: code, stdout: outs[j].String()})
		if code == exitComplete {
			complete++
		}
		if out.Undo == nil {
			continue
		}
		held := readZipGo(t, out.Undo.Archive)
		for _, name := range []string{"app/a", "app/b", "app/new"} {
			if got, ok := held[name]; ok && strings.HasPrefix(got, "archived") || name == "app/new" && ok {
				t.Errorf("run %d.%d: the before-state holds %s %q: the other run's", i, j, name, got)
			}
		}
	}
	return complete
}
