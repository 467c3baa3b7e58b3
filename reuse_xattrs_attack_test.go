package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestAttackReusedEntryTakesAnotherFilesXattrs: with --xattrs, the walk lstats app/a, then
// reads its extended attributes by name (llistxattr on /proc/self/fd/N/a). A file read from
// the source is checked to be the one listed, and its attributes read again through its
// descriptor; but app/a is unchanged since LATEST, so its entry is copied from the reference
// and the file is never opened: nothing checks that the attributes read by name belong to
// the file whose lstat made the entry reusable. Between the two, app/b (another file, with
// other attributes: a file capability, an ACL) is renamed over app/a (strace holds the lstat
// of app/a). The new archive stores app/a with the reference's bytes (the old app/a) and
// app/b's attributes, which no file ever had together, in a run that says complete; as root,
// restore --xattrs gives the old bytes the other file's capability.
//
// A second form (the rename while app/b's lstat is held): app/b's entry is copied from the
// reference without any of its attributes, the failed read of them reported as "vanished",
// not lost, and the run complete; a file read instead is not stored at all when it vanished.
//
// Expected: an entry copied from the reference carries the attributes of the very file the
// walk found unchanged (read through a descriptor of it, or checked against its lstat after
// reading them by name, and read again from the file otherwise); an entry is never stored
// with attributes that could not be read without a lost warning.
func TestAttackReusedEntryTakesAnotherFilesXattrs(t *testing.T) {
	for _, held := range []string{"a", "b"} {
		t.Run("held at "+held, func(t *testing.T) {
			dir := t.TempDir()
			app := filepath.Join(dir, "app")
			makeTree(t, dir, map[string]node{
				"app/a": {content: "AAAA-evil\n"},
				"app/b": {content: "BBBB-tool\n"},
			})
			for _, n := range []string{"a", "b"} {
				if err := unix.Setxattr(filepath.Join(app, n), "user.tag", []byte("from-"+n), 0); err != nil {
					t.Skipf("no user.* attributes here: %v", err)
				}
			}
			set := filepath.Join(dir, "set")
			r, _ := setRun(t, dir, set, "--xattrs")
			mustExit(t, r, exitComplete)
			r = runHeld(t, dir, "newfstatat:delay_exit=300000", []string{app}, func(l string) bool {
				return strings.Contains(l, "newfstatat(") && strings.Contains(l, `"`+held+`"`)
			}, func() {
				if err := os.Rename(filepath.Join(app, "b"), filepath.Join(app, "a")); err != nil {
					t.Fatal(err)
				}
			}, "create", "--xattrs", "--output-dir", set, "app")
			if r.code != exitComplete {
				return // incomplete or failed: the run does not claim what it stored
			}
			second := filepath.Join(set, readLatest(t, set))
			data := readZipGo(t, second)
			for _, f := range readManifest(t, second).Files {
				if f.Meta == nil {
					continue
				}
				content, tag := data[f.Path], string(f.Meta.Xattrs["user.tag"])
				switch {
				case strings.HasPrefix(content, "AAAA") && tag != "from-a",
					strings.HasPrefix(content, "BBBB") && tag != "from-b":
					t.Errorf("%s stored with bytes %q and user.tag %q, which no file had together, in a complete run (reused %d): %s",
						f.Path, content, tag, readReceipt(t, second+".receipt.json").Counts.Reused, strings.TrimSpace(r.stderr))
				}
			}
		})
	}
}
