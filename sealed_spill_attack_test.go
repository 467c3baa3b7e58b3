package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackSealedCentralDirectorySpillUnsaid: docs/encryption.md lists where the plaintext of
// an encrypted run lives ("Where plaintext lives": the compressed entries that wait their
// turn, and SQLite snapshots, in $TMPDIR), and its receipt names no path at all. Past 4 MiB
// of central records (about 40,000 files, or 4,000 of long names) the zip's central
// directory, every file's name, size, time and CRC-32 in plaintext, spills to an unlinked
// temp file in $TMPDIR too, and the page said nothing of it (docs/speed.md put the spill
// beside the archive): whoever relies on the list to choose TMPDIR leaves the names of an
// encrypted backup on an unencrypted disk.
// Correct: the page lists the central directory among what $TMPDIR holds. (Here $TMPDIR is
// a full tmpfs, which shows the spill: the run fails naming it.)
func TestAttackSealedCentralDirectorySpillUnsaid(t *testing.T) {
	t.Parallel()
	key := newAgeKey(t)
	dir := t.TempDir()
	deep := filepath.Join(dir, "app", strings.Repeat("d", 240), strings.Repeat("e", 240), strings.Repeat("f", 240))
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 4200 { // about 4.3 MiB of central records
		if err := os.WriteFile(filepath.Join(deep, itoa(i)+strings.Repeat("x", 240)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	mountTmpfs(t, tmp, "64k")
	r := backup(t, runOpts{dir: dir, env: []string{"TMPDIR=" + tmp}}, "create", "-q", "--recipient", key.recipient, "-o", "out.zip.age", "app")
	mustExit(t, r, exitFailed)
	if !strings.Contains(r.stderr, "spooling in "+tmp+": no space left on device") {
		t.Fatalf("the central directory did not spill to $TMPDIR: %s", r.stderr)
	}
	doc, err := os.ReadFile("docs/encryption.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "## Where plaintext lives")
	section, _, _ = strings.Cut(section, "\n## ")
	if !strings.Contains(section, "central directory") {
		t.Errorf("docs/encryption.md's \"Where plaintext lives\" does not say that the central directory (every file's name) spills to $TMPDIR")
	}
}
