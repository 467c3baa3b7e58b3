package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"backup/format"
)

// underLimit runs the binary in dir with its limit on open files at n (soft and hard, so
// that Go cannot raise it).
func underLimit(t *testing.T, dir string, n int, args ...string) result {
	t.Helper()
	cmd := exec.Command("sh", append([]string{"-c", fmt.Sprintf(`ulimit -n %d && exec "$@"`, n), "sh", binary}, args...)...)
	cmd.Dir = dir
	return runCmd(t, cmd)
}

// TestAttackLimitsRuntimeDiesMidRun: the Go runtime sets up its poller (an epoll and an
// eventfd descriptor) at the first os.Open, and dies when it cannot ("fatal error: runtime:
// eventfd failed", a stack dump, exit 2). Create opens everything else with raw system
// calls, so the first os.Open was the folder's sync in the archive's publish: under
// ulimit -n 8, create -o renamed the archive and a "complete" receipt into place, then died
// before it synced the folder or said anything, with exit 2, which says a usage error;
// verify, list, restore, status, prune and sets died the same way under 6 or 7. Correct: a
// limit too small to run in is one line (no stack dump), never exit 2, and a run that
// fails leaves no archive under the final name (an incomplete one, whose folders the limit
// left unread, is there, as any).
func TestAttackLimitsRuntimeDiesMidRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"src": {kind: "dir"}, "src/a": {content: "a\n"}})
	if r := backup(t, runOpts{dir: dir}, "create", "-q", "-o", "have.zip", "src"); r.code != exitComplete {
		t.Fatalf("create: exit %d\n%s", r.code, r.stderr)
	}
	if r := backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "set", "src"); r.code != exitComplete {
		t.Fatalf("create into a set: exit %d\n%s", r.code, r.stderr)
	}
	for n := 4; n <= 12; n++ {
		out := fmt.Sprintf("out%d.zip", n)
		for _, args := range [][]string{
			{"create", "-o", out, "src"},
			{"create", "--output-dir", fmt.Sprintf("set%d", n), "src"},
			{"verify", "have.zip"},
			{"list", "have.zip"},
			{"restore", "have.zip", fmt.Sprintf("dest%d", n)},
			{"status", "set"},
			{"prune", "--keep-last", "5", "set"},
			{"sets", "set"},
		} {
			r := underLimit(t, dir, n, args...)
			if r.code == exitUsage || strings.Contains(r.stderr, "fatal error") || strings.Contains(r.stderr, "goroutine ") {
				t.Errorf("backup %s under ulimit -n %d: exit %d:\n%s", strings.Join(args, " "), n, r.code, lastLines(firstLines(r.stderr, 3), 3))
			}
		}
		r := underLimit(t, dir, n, "create", "-o", out+"2", "src")
		if _, err := os.Stat(filepath.Join(dir, out+"2")); r.code != exitComplete && r.code != exitIncomplete && err == nil {
			t.Errorf("create under ulimit -n %d: exit %d, yet the archive is at its final name:\n%s", n, r.code, firstLines(r.stderr, 3))
		}
	}
}

// firstLines is the first n lines of s.
func firstLines(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	return strings.Join(lines[:min(n, len(lines))], "")
}

// inRemovedFolder runs the binary in a folder of dir removed once the shell is in it, as
// cron runs a job whose folder was deleted.
func inRemovedFolder(t *testing.T, dir string, args ...string) result {
	t.Helper()
	if err := os.Mkdir(filepath.Join(dir, "gone"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", append([]string{"-c", `cd gone && rmdir ../gone && exec "$@"`, "sh", binary}, args...)...)
	cmd.Dir = dir
	return runCmd(t, cmd)
}

// TestAttackRestoreIntoRemovedCurrentFolder: restore ARCHIVE . in a current folder that was
// removed opened it (a folder with no name, where nothing can be made), then failed every
// entry on its own ("app/: app: no such file or directory (not restored)", two lines for
// each) and said "incomplete: 0 files, 0 dirs", exit 3, where --force (its undo) and a
// relative DEST below it stop at once with exit 1. Correct: one line saying the
// destination was removed, exit 1, as for any DEST that cannot be written.
func TestAttackRestoreIntoRemovedCurrentFolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"app": {kind: "dir"}, "app/a": {content: "a\n"}, "app/b": {content: "b\n"}})
	arch := filepath.Join(dir, "app.zip")
	if r := backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "app"); r.code != exitComplete {
		t.Fatalf("create: exit %d\n%s", r.code, r.stderr)
	}
	for _, args := range [][]string{{"restore", arch, "."}, {"restore", "--json", arch, "."}, {"restore", "--jobs", "1", arch, "."}} {
		r := inRemovedFolder(t, dir, args...)
		if r.code != exitFailed || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "removed") {
			t.Errorf("backup %s in a removed folder: exit %d, want %d and one line saying so:\n%s", strings.Join(args, " "), r.code, exitFailed, firstLines(r.stderr, 6))
		}
	}
}

// TestAttackCreateJobsUnderSmallLimit: create's --jobs workers each hold a file open, and
// nothing fitted their number to the limit on open files, as restore's are: under
// ulimit -n 16, create --jobs 8 of one flat folder of 500 files lost some ("open: too many
// open files", exit 3) that --jobs 1 and --jobs 4 read whole under the same limit, where
// create's page says only a tree deeper than the limit loses what is below that depth.
// Correct: fewer files read at once, all of them read.
func TestAttackCreateJobsUnderSmallLimit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	nodes := map[string]node{"flat": {kind: "dir"}}
	for i := range 500 {
		nodes[fmt.Sprintf("flat/f%03d", i)] = node{content: strings.Repeat("x", i)}
	}
	makeTree(t, dir, nodes)
	for _, n := range []int{14, 16, 20} {
		for _, jobs := range []string{"8", "128"} {
			out := fmt.Sprintf("flat-%d-%s.zip", n, jobs)
			r := underLimit(t, dir, n, "create", "--jobs", jobs, "-o", out, "flat")
			if r.code != exitComplete || strings.Contains(r.stderr, "too many open files") {
				t.Errorf("create --jobs %s under ulimit -n %d: exit %d, want %d:\n%s", jobs, n, r.code, exitComplete, firstLines(r.stderr, 4))
			}
		}
	}
}

// fullTmpfs mounts a tmpfs of 64 KiB on a new folder of dir and fills it.
func fullTmpfs(t *testing.T, dir string) string {
	t.Helper()
	full := filepath.Join(dir, "full")
	if err := os.Mkdir(full, 0o755); err != nil {
		t.Fatal(err)
	}
	mountTmpfs(t, full, "64k")
	pad, err := os.Create(filepath.Join(full, "pad"))
	if err != nil {
		t.Fatal(err)
	}
	defer pad.Close()
	pad.Write(make([]byte, 1<<20)) // fails once the tmpfs is full, as meant
	return full
}

// TestAttackCreateSpoolInFullTmpdir: a streamed archive (-o -) and an encrypted one stage
// the compressed entries that wait their turn in $TMPDIR. With $TMPDIR full, the run
// failed as it should, but said "writing archive -: no space left on device" (or the
// archive's path, on a disk with room to spare): the spool's path was dropped with the
// rest of the error, and nothing pointed at $TMPDIR. Correct: the error names the folder
// that is full.
func TestAttackCreateSpoolInFullTmpdir(t *testing.T) {
	mustRoot(t)
	t.Parallel()
	dir := t.TempDir()
	full := fullTmpfs(t, dir)
	nodes := map[string]node{"src": {kind: "dir"}}
	for i := range 4 {
		nodes[fmt.Sprintf("src/r%d", i)] = node{content: randomString(t, 4<<20)}
	}
	makeTree(t, dir, nodes)
	out, err := os.Create(filepath.Join(dir, "stream.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd := exec.Command(binary, "create", "--jobs", "4", "-o", "-", "--receipt", "stream.receipt.json", "src")
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "TMPDIR="+full)
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = out, &stderr
	cmd.Run()
	code := cmd.ProcessState.ExitCode()
	if code != exitFailed || !strings.Contains(stderr.String(), full) {
		t.Errorf("create -o - with $TMPDIR full: exit %d, want %d and the error naming %s:\n%s", code, exitFailed, full, stderr.String())
	}
	if rc := readReceipt(t, filepath.Join(dir, "stream.receipt.json")); rc.Status != "failed" || !strings.Contains(rc.Error, full) {
		t.Errorf("receipt: status %q, error %q; want failed, naming %s", rc.Status, rc.Error, full)
	}
}

// TestAttackStatusTableToFullStdout: status and sets, commands that only answer, wrote their
// table to a stdout that took none of it (/dev/full, as a cron job's redirect to a full
// disk) and exited 0 with nothing said, where list, version, help and their own --json
// exit 1 with "writing to stdout: no space left on device". Correct: an answer that cannot
// be written is one line on stderr and exit 1.
func TestAttackStatusTableToFullStdout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"src": {kind: "dir"}, "src/a": {content: "a\n"}})
	if r := backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "set", "src"); r.code != exitComplete {
		t.Fatalf("create into a set: exit %d\n%s", r.code, r.stderr)
	}
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full")
	}
	defer full.Close()
	for _, args := range [][]string{{"status", "set"}, {"status", "--max-age", "1h", "set"}, {"sets", "."}} {
		cmd := exec.Command(binary, args...)
		var stderr strings.Builder
		cmd.Dir, cmd.Stdout, cmd.Stderr = dir, full, &stderr
		cmd.Run()
		if code := cmd.ProcessState.ExitCode(); code != exitFailed || !strings.Contains(stderr.String(), "writing to stdout: no space left on device") {
			t.Errorf("backup %s >/dev/full: exit %d, want %d and one line saying so:\n%s", strings.Join(args, " "), code, exitFailed, stderr.String())
		}
	}
}

// TestAttackPrunePosixTZ: prune's buckets are calendar days "in local time (set TZ to
// choose)", but Go reads TZ only as a zone file's name: a POSIX rule, which cron, date and
// every C program take (TZ=UTC+14, EST5EDT,M3.2.0,M11.1.0), was not found as a file and
// made local time UTC, with nothing said. Two runs on one day in UTC that fall on two days
// under TZ=UTC+14 (UTC-14 hours) were one day for --keep-daily 2, and the older one was
// deleted; status printed their times in UTC. Correct: TZ as the C library takes it.
func TestAttackPrunePosixTZ(t *testing.T) {
	t.Parallel()
	set := t.TempDir()
	older := simulatedRun{started: time.Date(2025, 12, 5, 9, 0, 0, 0, time.UTC), status: format.Complete}
	newer := simulatedRun{started: time.Date(2025, 12, 5, 15, 0, 0, 0, time.UTC), status: format.Complete}
	writeSimulated(t, set, older)
	writeSimulated(t, set, newer)
	makeTree(t, set, map[string]node{"LATEST": {content: newer.name() + "\n"}})
	for _, tz := range []string{"UTC+14", "<-14>+14", "XST14XDT,M3.2.0,M11.1.0"} {
		r := backup(t, runOpts{env: []string{"TZ=" + tz}}, "prune", "--dry-run", "--keep-daily", "2", set)
		mustExit(t, r, exitComplete)
		if want := "keep  2025-12-04T19:00:00-14:00  complete  " + older.name() + "  daily #2"; !strings.Contains(r.stdout, want) {
			t.Errorf("TZ=%s prune --keep-daily 2: lacks %q:\n%s", tz, want, r.stdout)
		}
	}
}

// TestAttackStreamToClosedStdout: cron's line "backup create -o - --receipt R SRC >&-" (or a
// stdout left closed by whatever started it) streams the archive into nothing: Go's
// runtime opens /dev/null on a closed stdout before main runs, every write succeeds, and
// the run said complete, exit 0, with a receipt recording the SHA-256 of an archive that is
// nowhere, where the docs say a closed stdout fails a run with -o -. Correct: an archive
// sent to /dev/null is refused before anything is read, exit 2, as any output that cannot
// hold it, and no receipt says complete.
func TestAttackStreamToClosedStdout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"src": {kind: "dir"}, "src/a": {content: "a\n"}})
	for name, redirect := range map[string]string{"closed": ">&-", "null": ">/dev/null"} {
		receipt := filepath.Join(dir, name+".receipt.json")
		cmd := exec.Command("sh", "-c", `"$0" create -o - --receipt "$1" src `+redirect, binary, receipt)
		cmd.Dir = dir
		r := runCmd(t, cmd)
		_, err := os.Stat(receipt)
		if r.code != exitUsage || err == nil {
			t.Errorf("create -o - %s: exit %d (receipt written: %v), want %d and no receipt:\n%s", redirect, r.code, err == nil, exitUsage, r.stderr)
		}
	}
}
