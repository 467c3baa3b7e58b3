package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"backup/format"
)

// TestAttackRunStoresAnotherRunsTemp: two runs at once, each archive inside the tree the
// other backs up (two jobs backing up / into /var/backups). The second run stored the
// first one's half-written archive (.a.zip.tmp-N, 50 MB of a 350 MB archive in one try) as
// a file of the tree, with a `changed` warning that fails --strict, and a run that met the
// temp name after its rename warned `vanished`. Correct: a temp file a run holds while it
// writes it is excluded (rule backup-temp), nothing warned; one no run holds (a killed
// run's), or one others can read (which anyone could hold), is an ordinary file, stored.
func TestAttackRunStoresAnotherRunsTemp(t *testing.T) {
	mustTool(t, "strace")
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "app/out")
	makeTree(t, filepath.Join(dir, "app"), map[string]node{
		"data":                   {content: strings.Repeat("backup\n", 1<<16)},
		"out/.old.zip.tmp-12345": {content: "a killed run's\n"},
	})
	// Anyone who can read a file can flock it: held so, a file others can read is no run's.
	readable := filepath.Join(out, ".kept.zip.tmp-7")
	if err := os.WriteFile(readable, []byte("readable by all\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(readable)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	// A's every fsync waits 2 s: its temp archive stays open, held, while B runs.
	a, temp := startHeldRun(t, dir, out, "trace=fsync", "inject=fsync:delay_enter=2000000")

	r := backup(t, runOpts{dir: dir}, "create", "-q", "--strict", "-o", filepath.Join(out, "b.zip"), "app")
	mustExit(t, r, exitComplete)
	rec := readReceipt(t, filepath.Join(out, "b.zip.receipt.json"))
	held := "app/out/" + filepath.Base(temp)
	if !slices.Contains(rec.Excluded, format.Excluded{Path: held, Rule: "backup-temp"}) || len(rec.Warnings) != 0 {
		t.Errorf("excluded %v, warnings %v; want %s excluded as backup-temp and no warning", rec.Excluded, rec.Warnings, held)
	}
	got := readZip(t, filepath.Join(out, "b.zip"))
	if _, ok := got[held]; ok {
		t.Errorf("the archive holds %s, another run's archive half-written", held)
	}
	if got["app/out/.old.zip.tmp-12345"] != "a killed run's\n" {
		t.Error("a temp file no run holds (a killed run's) was not stored")
	}
	if got["app/out/.kept.zip.tmp-7"] != "readable by all\n" {
		t.Error("a temp-named file others can read, held with flock, was not stored: anyone could keep it out")
	}
	if err := a.Wait(); err != nil {
		t.Fatalf("A: %v", err)
	}
}

// startHeldRun starts `create -q -o OUT/a.zip app` in dir under strace, its -e options
// given (delays that hold it), and returns it and its temp archive once that is made.
func startHeldRun(t *testing.T, dir, out string, strace ...string) (*exec.Cmd, string) {
	t.Helper()
	args := []string{"-f", "-qq", "-o", os.DevNull}
	for _, e := range strace {
		args = append(args, "-e", e)
	}
	a := exec.Command("strace", append(args, binary, "create", "-q", "-o", filepath.Join(out, "a.zip"), "app")...)
	a.Dir = dir
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Process.Kill(); a.Wait() })
	waitForGlob(t, filepath.Join(out, ".a.zip.tmp-*"))
	temps, _ := filepath.Glob(filepath.Join(out, ".a.zip.tmp-*"))
	return a, temps[0]
}

// TestAttackRunTempMarkLostToProbe: a run makes its temp archive, then takes its exclusive
// flock on it; another run's walk probing that file with its shared flock between the two
// (held here while A's flock is 1 s late under strace: a probe lands there by chance when
// two jobs back up each other's folders) made A's LOCK_EX|LOCK_NB fail, and CreateTemp
// ignored the failure: A wrote its whole archive unheld, and run B then stored it as a file
// of the tree (.a.zip.tmp-N, 3 of 3 tries: not excluded, B's archive holding A's unfinished
// one, which a B reading it while A writes stores half-written with `changed`).
// Correct: a probe lets go at once, so the run takes its mark once the probe is gone, and
// holds it until it closes the file.
func TestAttackRunTempMarkLostToProbe(t *testing.T) {
	mustTool(t, "strace")
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "app/out")
	makeTree(t, filepath.Join(dir, "app"), map[string]node{
		"data":      {content: strings.Repeat("backup\n", 1<<16)},
		"out/.keep": {content: ""},
	})
	// A's every fsync waits 3 s (its temp archive stays open while B runs), each flock 1 s:
	// its first, on its temp archive, comes while the probe below holds it.
	a, temp := startHeldRun(t, dir, out, "trace=fsync,flock",
		"inject=fsync:delay_enter=3000000", "inject=flock:delay_enter=1000000")
	// The probe of another run, as atomicfile.HeldByRun makes it, here held 1.5 s.
	f, err := os.Open(temp)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		t.Fatalf("the probe: %v", err)
	}
	time.Sleep(1500 * time.Millisecond)
	f.Close()
	time.Sleep(time.Second) // A's next try at its lock, 1 s late too

	r := backup(t, runOpts{dir: dir}, "create", "-q", "--strict", "-o", filepath.Join(out, "b.zip"), "app")
	rec := readReceipt(t, filepath.Join(out, "b.zip.receipt.json"))
	held := "app/out/" + filepath.Base(temp)
	if r.code != exitComplete || !slices.Contains(rec.Excluded, format.Excluded{Path: held, Rule: "backup-temp"}) || len(rec.Warnings) != 0 {
		t.Errorf("exit %d, excluded %v, warnings %v; want exit 0, %s excluded as backup-temp and no warning", r.code, rec.Excluded, rec.Warnings, held)
	}
	if _, ok := readZip(t, filepath.Join(out, "b.zip"))[held]; ok {
		t.Errorf("the archive holds %s, another run's unfinished archive", held)
	}
	if err := a.Wait(); err != nil {
		t.Fatalf("A: %v", err)
	}
}

// TestAttackRunTempHeldByAnotherUser: the user's file app/.notes.tmp-1 was readable by all
// (0644) when another user (nobody) opened it and took its flock (flock(1)); the user then
// made it 0600. The run, as the user, found it its own, readable by no one else, and held,
// and left it out (rule backup-temp, status complete): a user with no permission on the
// file kept it out of every backup, as c6f6488 meant to stop (a descriptor outlives the
// chmod). Correct: a temp file is another run's only when a process of the running user
// holds it; one that another user holds is stored as any file.
func TestAttackRunTempHeldByAnotherUser(t *testing.T) {
	mustRoot(t)
	mustTool(t, "flock")
	t.Parallel()
	dir := sharedTempDir(t)
	makeTree(t, filepath.Join(dir, "app"), map[string]node{
		".notes.tmp-1": {content: "the user's notes\n", mode: 0o644},
		"other":        {content: "x\n"},
	})
	notes := filepath.Join(dir, "app/.notes.tmp-1")
	hold := exec.Command("flock", "-x", notes, "sleep", "60")
	hold.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	if err := hold.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-hold.Process.Pid, syscall.SIGKILL); hold.Process.Kill(); hold.Wait() })
	for i := 0; ; i++ { // until nobody holds it
		f, err := os.Open(notes)
		if err != nil {
			t.Fatal(err)
		}
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
		f.Close()
		if err == syscall.EWOULDBLOCK {
			break
		}
		if i == 500 {
			t.Fatal("nobody's flock(1) never held the file")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := os.Chmod(notes, 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "a.zip")
	r := backup(t, runOpts{dir: dir}, "create", "-q", "--strict", "-o", out, "app")
	rec := readReceipt(t, out+".receipt.json")
	if r.code != exitComplete || len(rec.Excluded) != 0 {
		t.Errorf("exit %d, excluded %v; want exit 0, nothing excluded", r.code, rec.Excluded)
	}
	if got := readZip(t, out)["app/.notes.tmp-1"]; got != "the user's notes\n" {
		t.Errorf("app/.notes.tmp-1 stored as %q: another user kept it out", got)
	}
}
