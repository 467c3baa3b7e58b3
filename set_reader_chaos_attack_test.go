package main

import (
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestAttackChaosReaderTargetPrunedAfterResolve: verify, list and restore of a set read
// LATEST, check its target and its receipt, and only then open the archive by its name. A
// create --keep-last 1 that runs between the two (strace holds the reader's first open of
// the archive) moves LATEST on and prunes the old target, as the docs allow: the reader
// said "no such file or directory" and exited 1 about a healthy set, whose LATEST it must
// read again, as it does when the target goes missing before its check.
func TestAttackChaosReaderTargetPrunedAfterResolve(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"verify", "list", "restore"} {
		t.Run(cmd, func(t *testing.T) {
			t.Parallel()
			dir, set, _, b := newestSet(t)
			args := []string{cmd, set}
			if cmd == "restore" {
				args = append(args, filepath.Join(dir, "dest"))
			}
			held, stderr := heldOpen(t, dir, filepath.Join(set, b), args...)
			waitFor(t, "the reader held at its open of "+b, inSyscall(held, unix.SYS_OPENAT))
			makeTree(t, filepath.Join(dir, "app"), map[string]node{"c": {content: "c\n"}})
			mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "--keep-last", "1", "app"), exitComplete)
			if _, err := os.Stat(filepath.Join(set, b)); err == nil {
				t.Fatalf("%s was not pruned: the race did not happen", b)
			}
			held.Wait()
			if code := held.ProcessState.ExitCode(); code != exitComplete {
				t.Fatalf("%s of the set whose LATEST moved on: exit %d, stderr %q; want %d, the new target read", cmd, code, stderr, exitComplete)
			}
			if cmd == "restore" {
				if _, err := os.Stat(filepath.Join(dir, "dest", "app", "c")); err != nil {
					t.Errorf("the restore did not restore LATEST's new target: %v", err)
				}
			}
		})
	}
}

// heldOpen runs the binary under strace, which holds its first open of path for five
// seconds before making it: long enough for another run to change the set meanwhile.
func heldOpen(t *testing.T, dir, path string, args ...string) (*exec.Cmd, *strings.Builder) {
	t.Helper()
	mustRoot(t)
	mustTool(t, "strace")
	sargs := []string{"-f", "-qq", "-o", os.DevNull, "-P", path, "-e", "trace=openat",
		"-e", "inject=openat:delay_enter=5000000:when=1", binary}
	return startIn(t, dir, "strace", append(sargs, args...)...)
}

// TestAttackChaosS3ReaderTargetPrunedWhileRead: verify and restore of a set in a bucket
// resolve LATEST, then read the object in ranges. A create --keep-last 1 that runs while they
// read (strace holds the reader's first open of its spool, once reading began) moves LATEST
// on and deletes the old target; the reader said "file does not exist" and exited 1 about a
// healthy set instead of reading it again.
func TestAttackChaosS3ReaderTargetPrunedWhileRead(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "strace")
	for _, cmd := range []string{"verify", "restore"} {
		t.Run(cmd, func(t *testing.T) {
			t.Parallel()
			s := newS3Set(t)
			dir := t.TempDir()
			// Larger than the blocks a reader keeps in memory, so that it spools.
			big := make([]byte, 40<<20)
			rand.Read(big)
			makeTree(t, filepath.Join(dir, "app"), map[string]node{"big": {content: string(big)}, "a": {content: "a\n"}})
			run := func(args ...string) result { return backup(t, runOpts{dir: dir, env: s.env}, args...) }
			mustExit(t, run("create", "-q", "--output-dir", s.loc, "app"), exitComplete)
			old := readLatest(t, s.dir)
			args := []string{"-f", "-qq", "-o", os.DevNull, "-P", filepath.Join(s.srv.CacheHome, "backup"), "-e", "trace=openat",
				"-e", "inject=openat:delay_enter=5000000:when=1", binary, cmd, s.loc}
			if cmd == "restore" {
				args = append(args, filepath.Join(dir, "dest"))
			}
			held := exec.Command("strace", args...)
			held.Dir, held.Env = dir, append(os.Environ(), s.env...)
			var stderr strings.Builder
			held.Stderr = &stderr
			if err := held.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { held.Process.Kill(); held.Wait() })
			waitFor(t, "the reader held at its spool", inSyscall(held, unix.SYS_OPENAT))
			makeTree(t, filepath.Join(dir, "app"), map[string]node{"c": {content: "c\n"}})
			mustExit(t, run("create", "-q", "--output-dir", s.loc, "--keep-last", "1", "app"), exitComplete)
			if _, err := os.Stat(filepath.Join(s.dir, old)); err == nil {
				t.Fatalf("%s was not pruned: the race did not happen", old)
			}
			held.Wait()
			if code := held.ProcessState.ExitCode(); code != exitComplete {
				t.Fatalf("%s of the set whose LATEST moved on: exit %d, stderr %q; want %d, the new target read", cmd, code, stderr.String(), exitComplete)
			}
			if cmd == "restore" {
				if _, err := os.Stat(filepath.Join(dir, "dest", "app", "c")); err != nil {
					t.Errorf("the restore did not restore LATEST's new target: %v", err)
				}
			}
		})
	}
}

// TestAttackChaosStatusMixesTwoMoments: status lists the set's runs, then reads LATEST. A
// create --keep-last 1 between the two (strace holds status's read of the receipts) moves
// LATEST on and prunes every run listed: status printed the pruned runs as "unknown (its
// receipt is missing)", not the one LATEST names (held at another call, it also said that
// LATEST "is not the newest complete backup", naming an older, pruned run as newer). The
// runs listed and LATEST must be of one moment.
func TestAttackChaosStatusMixesTwoMoments(t *testing.T) {
	t.Parallel()
	dir, set, a, b := newestSet(t)
	held, stderr := heldOpen(t, dir, filepath.Join(set, b+".receipt.json"), "status", set)
	waitFor(t, "status held at its read of "+b+"'s receipt", inSyscall(held, unix.SYS_OPENAT))
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"c": {content: "c\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "--keep-last", "1", "app"), exitComplete)
	c := readLatest(t, set)
	if _, err := os.Stat(filepath.Join(set, b)); err == nil {
		t.Fatalf("%s was not pruned: the race did not happen", b)
	}
	held.Wait()
	out := held.Stdout.(*strings.Builder).String()
	if code := held.ProcessState.ExitCode(); code != exitComplete {
		t.Fatalf("status: exit %d, stderr %q", code, stderr)
	}
	if !strings.Contains(out, c+"  <- LATEST") || strings.Contains(out, a) || strings.Contains(out, "not the newest complete") {
		t.Errorf("status of the set whose LATEST moved on to %s while it read:\n%s\nwant the runs of one moment: %s as LATEST, %s and %s gone, no newer backup", c, out, c, a, b)
	}
}

// TestAttackChaosStatusShowsPrunedRunUnknown: a prune that deletes run A (its archive, then
// its receipt) after status listed the set but before status read A's receipt (strace holds
// that read) made status list A as "unknown (its receipt is missing)": a damaged backup,
// where there is none any more. A run whose receipt and archive are both gone since the
// listing was pruned meanwhile, and is not listed.
func TestAttackChaosStatusShowsPrunedRunUnknown(t *testing.T) {
	t.Parallel()
	dir, set, a, b := newestSet(t)
	held, stderr := heldOpen(t, dir, filepath.Join(set, a+".receipt.json"), "status", set)
	waitFor(t, "status held at its read of "+a+"'s receipt", inSyscall(held, unix.SYS_OPENAT))
	mustExit(t, backup(t, runOpts{dir: dir}, "prune", "--keep-last", "1", set), exitComplete)
	if _, err := os.Stat(filepath.Join(set, a)); err == nil {
		t.Fatalf("%s was not pruned: the race did not happen", a)
	}
	held.Wait()
	out := held.Stdout.(*strings.Builder).String()
	if code := held.ProcessState.ExitCode(); code != exitComplete {
		t.Fatalf("status: exit %d, stderr %q", code, stderr)
	}
	if strings.Contains(out, a) || strings.Contains(out, "unknown") || !strings.Contains(out, b+"  <- LATEST") {
		t.Errorf("status while prune deleted %s:\n%s\nwant %s alone, as LATEST, and no unknown run", a, out, b)
	}
}

// TestAttackChaosPruneTermWhileCheckingFlags: SIGTERM reaches prune --json while it checks
// its --attic (strace holds the check), before its own signal handling began: Go's default
// action killed it (exit 143), and --json printed nothing, where docs/sets.md says that
// whatever ends a prune once its flags parse, an interrupt too, --json still prints it, and
// the exit code table says 130.
func TestAttackChaosPruneTermWhileCheckingFlags(t *testing.T) {
	t.Parallel()
	dir, set, _, _ := newestSet(t)
	attic := filepath.Join(dir, "attic")
	if err := os.Mkdir(attic, 0o755); err != nil {
		t.Fatal(err)
	}
	held, stderr := heldRun(t, dir, "newfstatat", attic, "prune", "--json", "--keep-last", "1", "--attic", attic, set)
	waitFor(t, "prune held at its check of --attic", inSyscall(held, unix.SYS_NEWFSTATAT))
	if err := syscall.Kill(tracee(t, held.Process.Pid), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	held.Wait()
	out := held.Stdout.(*strings.Builder).String()
	if code := held.ProcessState.ExitCode(); code != exitInterrupted || !strings.Contains(out, `"error"`) {
		t.Errorf("exit %d, stdout %q, stderr %q; want %d and the --json answer saying why", code, out, stderr, exitInterrupted)
	}
	if got := len(setArchives(t, set)); got != 4 {
		t.Errorf("the set holds %d files of runs, want 4: nothing pruned", got)
	}
}
