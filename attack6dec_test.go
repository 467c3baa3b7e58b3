package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backup/format"
)

// A set whose LATEST names an archive with a non-printable byte in its name (from the
// SOURCE's name) and whose receipt is refused (a status backup never writes): the stderr
// line quotes the name with QuoteName ("names %s" in backupset.target) inside an error that
// also carries the receipt's path raw, so sayf escapes the whole error text and the already
// quoted name a second time: names \"a\\x01b-...zip\" where status's own table prints
// "a\x01b-...zip".
func TestAttack6DecLatestNameEscapedTwice(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "a\x01b")
	makeTree(t, src, map[string]node{"f": {content: "hi\n"}})
	set := filepath.Join(dir, "set")
	if err := os.Mkdir(set, 0o755); err != nil {
		t.Fatal(err)
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "set", "a\x01b"), 0)
	pointer, err := os.ReadFile(filepath.Join(set, "LATEST"))
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimSpace(string(pointer))
	receipt := filepath.Join(set, name+format.ReceiptSuffix)
	data, err := os.ReadFile(receipt)
	if err != nil {
		t.Fatal(err)
	}
	data = []byte(strings.Replace(string(data), `"status": "complete"`, `"status": "bogus"`, 1))
	if err := os.WriteFile(receipt, data, 0o644); err != nil {
		t.Fatal(err)
	}
	quoted := format.QuoteName(name) // "a\x01b-...zip", as every other line prints it
	for _, cmd := range []string{"status", "verify", "list"} {
		r := backup(t, runOpts{dir: dir}, cmd, "set")
		mustExit(t, r, 1)
		if !strings.Contains(r.stderr, "names "+quoted+":") {
			t.Errorf("%s: stderr does not name LATEST's target as %s (QuoteName, escaped once):\n%s", cmd, quoted, r.stderr)
		}
		if strings.Contains(r.stderr, `\\x01`) {
			t.Errorf("%s: the name is escaped twice (\\\\x01):\n%s", cmd, r.stderr)
		}
	}
}

// restore ARCHIVE missing/..: the kernel refuses the path (missing is not there), and
// 3b2a98e says such a ".." fails the command with nothing written. restore drops
// kernelPath's error (restore.go: the DEST is kept as given when kernelPath fails), plans
// against missing/.. (nothing there), then creates missing and restores into its parent:
// missing is left behind, and a file the parent held all along is reported as having
// "appeared in the destination during the restore", exit 3, where the same restore into
// that folder by its own name is refused as a conflict, nothing written (exit 1).
func TestAttack6DecRestoreMissingDotDotWrites(t *testing.T) {
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f": {content: "data\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "a.zip", "app"), 0)
	if err := os.WriteFile(filepath.Join(dir, "app", "f"), []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir}, "restore", "a.zip", "nope/..")
	if _, err := os.Lstat(filepath.Join(dir, "nope")); err == nil {
		t.Errorf("restore into nope/.. created nope (nothing may be written when the kernel refuses the path); stderr:\n%s", r.stderr)
	}
	if r.code != 1 && r.code != 2 {
		t.Errorf("exit %d, want 1 or 2 (the kernel refuses nope/..); stderr:\n%s", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "appeared in the destination during the restore") {
		t.Errorf("a file there all along is reported as appeared during the restore:\n%s", r.stderr)
	}
	if got := string(readFile(t, filepath.Join(dir, "app", "f"))); got != "precious\n" {
		t.Errorf("app/f = %q", got)
	}
}
