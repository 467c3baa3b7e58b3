package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackRestoreUserLockRaceWithReader: nobody holds root's DEST's flock (ignored, a
// reader's), so root's own lock in /run/backup alone keeps root's restores apart, and its
// file is made, locked, checked and removed by each run: two real restore --force runs
// started together into DEST, 10 times, each end complete or refused (exit 4), never both
// refused, never a before-state holding the other run's files, and no lock file left.
func TestAttackRestoreUserLockRaceWithReader(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "flock")
	mustTool(t, "setpriv")
	for i := range 10 {
		f, st := readableLockFixture(t)
		reader := holdAsNobody(t, st.Ino, "flock", "-s", f.dest, "sleep", "60")
		complete := raceRestores(t, f, i)
		killGroup(reader)
		if complete == 0 {
			t.Errorf("run %d: both refused", i)
		}
		if names, _ := filepath.Glob(fmt.Sprintf("/run/backup/restore-%d-%d.lock", st.Dev, st.Ino)); len(names) != 0 {
			t.Errorf("run %d: root's lock on DEST left behind: %v", i, names)
		}
	}
}

// TestAttackRestoreUserLockRunFull: nobody holds root's DEST's flock (ignored, a reader's)
// and has filled /run (through /run/lock, 1777 on many systems): root's lock file cannot be
// made, and two of root's restores into DEST both ran, the voiding root's lock is for.
// Right: the first holds /run/backup alone, the second exits 4 saying why, --json status
// locked, and nothing is left in /run/backup. /run here is a full tmpfs in a mount
// namespace of the test's own.
func TestAttackRestoreUserLockRunFull(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "flock")
	mustTool(t, "setpriv")
	mustTool(t, "strace")
	mustTool(t, "unshare")
	f, st := readableLockFixture(t)
	defer killGroup(holdAsNobody(t, st.Ino, "flock", "-s", f.dest, "sleep", "60"))
	// The first is held a second at each flock; once it holds /run/backup alone (or has
	// ended, taking no lock there, before the fix), the second runs.
	script := `mount -t tmpfs -o size=64k,nr_inodes=3,mode=0755 none /run && mkdir -m 700 /run/backup && : >/run/fill || exit 99
strace -f -y -o "$1/strace.log" -e trace=flock -e inject=flock:delay_exit=1000000 "$2" restore --force --no-undo "$3" "$4" 2>"$1/first.err" &
first=$!
i=0
until grep -Eq 'flock\([0-9]+</run/backup[^>]*>, LOCK_EX\|LOCK_NB\) += 0' "$1/strace.log" 2>/dev/null || ! kill -0 $first 2>/dev/null; do
	i=$((i+1)); [ $i -gt 200 ] && exit 98; sleep 0.05
done
"$2" restore --force --no-undo --json "$3" "$4" >"$1/second.out" 2>"$1/second.err"
echo $? >"$1/second.code"
wait $first
echo $? >"$1/first.code"
ls -A /run/backup >"$1/left"`
	cmd := exec.Command("unshare", "-m", "sh", "-c", script, "sh", f.dir, binary, f.arch, f.dest)
	cmd.Dir = f.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		log, _ := os.ReadFile(filepath.Join(f.dir, "strace.log"))
		t.Fatalf("%v: %s\n%s", err, out, log)
	}
	read := func(name string) string {
		data, _ := os.ReadFile(filepath.Join(f.dir, name))
		return string(data)
	}
	want := "backup restore: " + f.dest + ": another restore is running and no lock file could be made in /run/backup, so restores run one at a time; try again when it ends\n"
	if first, second := strings.TrimSpace(read("first.code")), strings.TrimSpace(read("second.code")); first != "0" || second != "4" || read("second.err") != want {
		t.Errorf("two restores into DEST, a reader holding its flock, /run full: first exit %s, second exit %s, stderr %q; want 0 and 4, %q",
			first, second, read("second.err"), want)
	}
	if out := restoreJSONOf(t, result{code: exitLocked, stdout: read("second.out")}); out.Status != "locked" {
		t.Errorf("second's --json status %q; want locked", out.Status)
	}
	assertContent(t, filepath.Join(f.dest, "app/a"), "archived a\n")
	if left := read("left"); left != "" {
		t.Errorf("left in /run/backup: %q", left)
	}
}
