package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackChangedCopyReusedAsUnchanged: app/f keeps changing while it is read (strace
// holds each of its 3 reads, after the bytes came back, and the file is rewritten in place
// with bytes of the same size). The first set run keeps the last copy, with a changed
// warning (not lost: the run is complete and LATEST moves), but the manifest records that
// copy under the metadata of the fstat after reading (size, mtime, ctime, inode of the file
// as it is now), while the bytes are those from before the last write. The file then stays
// as it is. The second run finds it "unchanged" since the reference (same size, mtime,
// ctime, inode) and copies the stale entry: its archive holds bytes the file no longer has,
// with no warning at all, and the receipt says complete.
//
// Expected: an entry whose bytes may not be the file's as its recorded metadata describes
// (the last copy of a changed file) is never reused: the next run reads the file, and
// stores its current bytes.
func TestAttackChangedCopyReusedAsUnchanged(t *testing.T) {
	dir := t.TempDir()
	app := filepath.Join(dir, "app")
	makeTree(t, dir, map[string]node{"app/f": {content: "version 0\n"}})
	f := filepath.Join(app, "f")
	var writes []func()
	for i := range 3 {
		writes = append(writes, func() {
			if err := os.WriteFile(f, []byte("version "+itoa(i+1)+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		})
	}
	set := filepath.Join(dir, "set")
	r := runHeldEach(t, dir, "read:delay_exit=800000", []string{f}, func(l string) bool {
		return strings.Contains(l, "read(") && strings.Contains(l, "/f>")
	}, writes, "create", "--output-dir", set, "app")
	if r.code != exitComplete {
		t.Fatalf("first run: exit %d\n%s", r.code, r.stderr)
	}
	first := filepath.Join(set, readLatest(t, set))
	if got := readZipGo(t, first)["app/f"]; got != "version 2\n" {
		t.Skipf("the reads did not go as held: stored %q (%s)", got, r.stderr)
	}
	// The file now holds "version 3\n" and is left alone.
	r, second := setRun(t, dir, set)
	mustExit(t, r, exitComplete)
	want, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	if got := readZipGo(t, second)["app/f"]; got != string(want) {
		rc := readReceipt(t, second+".receipt.json")
		t.Errorf("second run stored app/f as %q, the file holds %q (status %s, %d reused, %d warnings): the stale last copy of a changed file was reused",
			got, want, rc.Status, rc.Counts.Reused, len(rc.Warnings))
	}
}
