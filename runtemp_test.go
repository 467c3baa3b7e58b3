package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

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
	// A's every fsync waits 2 s: its temp archive stays open, held, while B runs.
	a := exec.Command("strace", "-f", "-qq", "-o", os.DevNull, "-e", "trace=fsync",
		"-e", "inject=fsync:delay_enter=2000000", binary, "create", "-q", "-o", filepath.Join(out, "a.zip"), "app")
	a.Dir = dir
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Process.Kill(); a.Wait() })
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
	waitForGlob(t, filepath.Join(out, ".a.zip.tmp-*"))
	temps, _ := filepath.Glob(filepath.Join(out, ".a.zip.tmp-*"))

	r := backup(t, runOpts{dir: dir}, "create", "-q", "--strict", "-o", filepath.Join(out, "b.zip"), "app")
	mustExit(t, r, exitComplete)
	rec := readReceipt(t, filepath.Join(out, "b.zip.receipt.json"))
	held := "app/out/" + filepath.Base(temps[0])
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
