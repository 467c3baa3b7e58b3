package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackReferenceInFolderOthersMayWrite: create --reference ARCHIVE copies the entries
// of unchanged files from ARCHIVE once it hashes to the SHA-256 its receipt beside it
// records. In a folder others may write to without the sticky bit (a shared 0777 folder),
// another user removes root's reference and its receipt and puts hers in their place: an
// archive holding her bytes for app/b.txt under what stat shows of it (size, mtime,
// change time, inode, mode), and a receipt that records that archive. Root's run took her
// archive as its reference: its own archive, elsewhere and complete, held her app/b.txt, a
// file she cannot write, and its read-back and verify passed. The local copy of a set in a
// bucket is refused in such a folder (docs/reuse.md: "a cache folder ... that others may
// write to and is not sticky"); a --reference was not.
// Correct: a reference that another user could replace (it or its receipt theirs or
// writable by others, or a folder on its path theirs or open to others without the sticky
// bit) copies nothing: a full run, said in one line.
func TestAttackReferenceInFolderOthersMayWrite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	reuseTree(t, dir)
	shared := filepath.Join(dir, "shared")
	if err := os.Mkdir(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o777); err != nil { // past the umask
		t.Fatal(err)
	}
	ref := filepath.Join(shared, "app.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", ref, "app"), exitComplete)
	// Hers now, at the same names: b.txt holds her bytes, and the receipt records her archive.
	tamperEntry(t, ref, "app/b.txt", "X\n")
	data, err := os.ReadFile(ref)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	editReceipt(t, ref+".receipt.json", func(rc map[string]any) {
		rc["archive"].(map[string]any)["sha256"] = hex.EncodeToString(sum[:])
	})
	for _, p := range []string{ref, ref + ".receipt.json"} {
		if err := os.Chown(p, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "out.zip")
	r := backup(t, runOpts{dir: dir}, "create", "--reference", ref, "-o", out, "app")
	mustExit(t, r, exitComplete)
	if got := contentIn(t, out, "app/b.txt"); got != "b\n" {
		t.Errorf("app/b.txt holds %q, copied from the archive another user put at --reference (%d reused); want the file's own \"b\\n\"",
			got, reusedIn(t, out))
	}
	if n := strings.Count(r.stderr, "backup: reading every file: no unchanged entry is copied: "+ref+": "); n != 1 {
		t.Errorf("stderr:\n%s\nwant one line saying why nothing is copied from %s", r.stderr, ref)
	}
}
