package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAttackMtimeAfter2038ClampedSilently: README says a file is stored with its "mtime to
// the nanosecond", and docs/formats.md that the extended-timestamp field holds "the exact
// whole seconds". That field is a signed 32-bit count (clampUnix32), and nothing else in the
// archive holds the seconds (the manifest adds only mtime_nsec): a file dated after
// 2038-01-19T03:14:07Z (a device with a wrong clock, a file touched into the future, a
// date twelve years from now) is stored as 2038-01-19T03:14:07, with its true fraction of a
// second, in a run that says complete with no warning; restore brings it back so, and no
// later run reuses its entry (its mtime never matches).
//
// Expected: the archive records the true mtime (the manifest could carry the seconds when
// they do not fit the field), or the run says it could not (a warning naming the file).
func TestAttackMtimeAfter2038ClampedSilently(t *testing.T) {
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"app/future": {content: "x\n"}})
	want := time.Date(2200, 1, 1, 0, 0, 0, 500_000_000, time.UTC)
	if err := os.Chtimes(filepath.Join(dir, "app", "future"), want, want); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir}, "create", "-q", "-o", "b.zip", "app")
	mustExit(t, r, exitComplete)
	rc := readReceipt(t, filepath.Join(dir, "b.zip.receipt.json"))
	out := filepath.Join(dir, "out")
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "b.zip", out), exitComplete)
	st, err := os.Stat(filepath.Join(out, "app", "future"))
	if err != nil {
		t.Fatal(err)
	}
	if got := st.ModTime().UTC(); !got.Equal(want) && len(rc.Warnings) == 0 {
		t.Errorf("app/future (mtime %s) restored with mtime %s, from a run that said %s with no warning", want, got, rc.Status)
	}
	// A set's second run finds it unchanged, by the seconds the manifest records.
	for range 2 {
		mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "set", "app"), exitComplete)
		time.Sleep(1100 * time.Millisecond) // a new archive name
	}
	latest, err := os.ReadFile(filepath.Join(dir, "set", "LATEST"))
	if err != nil {
		t.Fatal(err)
	}
	second := readReceipt(t, filepath.Join(dir, "set", strings.TrimSpace(string(latest))+".receipt.json"))
	if second.Counts.Reused != 1 {
		t.Errorf("the second set run reused %d files, want 1 (app/future, unchanged)", second.Counts.Reused)
	}
}
