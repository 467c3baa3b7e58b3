package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCreateQuietSaysReceiptNotWritten: a run as nobody into a folder it cannot write fails,
// and its failed receipt cannot be written either. -q prints the failure, and must print
// that the receipt was not written too: a wrapper that reads the receipt finds none, or an
// earlier run's. Once, -q left that line out.
func TestCreateQuietSaysReceiptNotWritten(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := sharedTempDir(t)
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	makeTree(t, filepath.Join(dir, "out"), map[string]node{".": {kind: "dir", mode: 0o555}})
	r := backup(t, runOpts{dir: dir, uid: nobody}, "create", "-q", "-o", filepath.Join(dir, "out", "x.zip"), "app")
	mustExit(t, r, exitFailed)
	if !strings.Contains(r.stderr, "backup: could not write receipt "+filepath.Join(dir, "out", "x.zip.receipt.json")) {
		t.Errorf("create -q, receipt not written: stderr %q does not say so", r.stderr)
	}
}

// TestCreateQuietSaysLatestDamaged: in a local set, the archive LATEST names no longer
// matches its receipt (a byte changed: bit rot, or an edit). The next run reads every file
// and completes; -q must still say that the set's backup is damaged, as nothing else will:
// status looks at the new LATEST. Once, -q said nothing, exit 0.
func TestCreateQuietSaysLatestDamaged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: strings.Repeat("a line of text\n", 4000)}})
	set := filepath.Join(dir, "set")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app"), exitComplete)
	damaged := filepath.Join(set, readLatest(t, set))
	f, err := os.OpenFile(damaged, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, 100); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{b[0] ^ 0xff}, 100); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r := backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app")
	mustExit(t, r, exitComplete)
	if !strings.Contains(r.stderr, damaged+": its SHA-256 is not the one its receipt records") {
		t.Errorf("create -q after LATEST's archive was damaged: stderr %q does not say so", r.stderr)
	}
}
