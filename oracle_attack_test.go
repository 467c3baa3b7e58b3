package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"

	"backup/format"
)

// excludedPaths returns the stored names a receipt lists as excluded.
func excludedPaths(t *testing.T, receipt string) []string {
	t.Helper()
	var paths []string
	for _, e := range readReceipt(t, receipt).Excluded {
		paths = append(paths, e.Path)
	}
	return paths
}

// TestAttackExcludeArgBeatsExcludeFrom: the docs give -x and --exclude-from gitignore's
// rules, and git (ls-files --exclude and --exclude-from) lets a pattern given on the command
// line decide over the lines of a file, wherever each flag stands. backup put every -x
// before every file's lines, so the file's decided: with a file saying *.log, -x
// '!keep.log' excluded keep.log anyway, and with a file saying !keep.log, -x '*.log' kept it.
func TestAttackExcludeArgBeatsExcludeFrom(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"keep.log": {content: "k"}, "a.log": {content: "a"}})
	os.WriteFile(filepath.Join(dir, "logs"), []byte("*.log\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "keep"), []byte("!keep.log\n"), 0o644)
	tests := []struct {
		args []string
		want []string
	}{
		// git ls-files --others --ignored --exclude-from=logs --exclude='!keep.log': a.log
		{[]string{"--exclude-from", "logs", "-x", "!keep.log"}, []string{"app/a.log"}},
		{[]string{"-x", "!keep.log", "--exclude-from", "logs"}, []string{"app/a.log"}},
		// git ls-files --others --ignored --exclude='*.log' --exclude-from=keep: a.log, keep.log
		{[]string{"-x", "*.log", "--exclude-from", "keep"}, []string{"app/a.log", "app/keep.log"}},
	}
	for _, tt := range tests {
		args := slices.Concat([]string{"create", "-o", "a.zip", "--force"}, tt.args, []string{"app"})
		r := backup(t, runOpts{dir: dir}, args...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d: %s", tt.args, r.code, r.stderr)
		}
		if got := excludedPaths(t, filepath.Join(dir, "a.zip.receipt.json")); !slices.Equal(got, tt.want) {
			t.Errorf("%v: excluded %q, want %q (as git decides)", tt.args, got, tt.want)
		}
	}
}

// TestAttackDryRunCountsLinkGroups: a dry run's receipt counts what the run would store
// (its files, bytes and reused files are the real run's), but it counted no hard-link
// group: a tree holding a file under two names said link_groups 0 with --dry-run, 1 without.
func TestAttackDryRunCountsLinkGroups(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{
		"a": {content: "shared\n"}, "c": {content: "own\n"}, "l": {kind: "symlink", content: "a"},
		"fifo": {kind: "fifo"}, "x.tmp": {content: "t"}, "d/e": {content: "e"},
	})
	if err := os.Link(filepath.Join(dir, "app", "a"), filepath.Join(dir, "app", "d", "b")); err != nil {
		t.Fatal(err)
	}
	for _, symlinks := range []string{"skip", "store"} {
		args := []string{"-x", "*.tmp", "--symlinks", symlinks, "--json", "app"}
		dry := backup(t, runOpts{dir: dir}, slices.Concat([]string{"create", "--dry-run"}, args)...)
		real := backup(t, runOpts{dir: dir}, slices.Concat([]string{"create", "-o", "a.zip", "--force"}, args)...)
		if dry.code != 0 || real.code != 0 {
			t.Fatalf("--symlinks %s: exit %d (dry run) and %d: %s%s", symlinks, dry.code, real.code, dry.stderr, real.stderr)
		}
		want := readReceipt(t, filepath.Join(dir, "a.zip.receipt.json")).Counts
		if want.LinkGroups != 1 {
			t.Fatalf("--symlinks %s: the run counted %d link groups, want 1", symlinks, want.LinkGroups)
		}
		var got format.Receipt
		if err := json.Unmarshal([]byte(dry.stdout), &got); err != nil {
			t.Fatal(err)
		}
		if got.Counts != want {
			t.Errorf("--symlinks %s: the dry run counted %+v, the run %+v", symlinks, got.Counts, want)
		}
	}
}

// TestAttackRestoreIncludeOnlyDamaged: --include selects by name, and an entry it selects
// that is damaged (here a file the manifest records and the archive lacks) is reported as
// damaged, status failed, whatever else the patterns select. Selected alone, it was not
// counted as a match: restore said "no entry matches --include", status refused and no
// damage, for the very name that --include 'app/' reports damaged.
func TestAttackRestoreIncludeOnlyDamaged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch := backupOf(t, dir, "a")
	hostile := filepath.Join(dir, "hostile.zip")
	addRecordAs(t, arch, hostile, "files", "app/lost.txt")
	for i, include := range []string{"app/", "app/lost.txt", "lost.txt"} {
		dest := filepath.Join(dir, "dest"+strconv.Itoa(i))
		r := backup(t, runOpts{dir: dir}, "restore", "--json", "--include", include, hostile, dest)
		var out struct {
			Status  string
			Damaged []struct{ Entry string }
		}
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Fatalf("--include %s: %v: %s", include, err, r.stderr)
		}
		if r.code != exitFailed || out.Status != "failed" || len(out.Damaged) != 1 || out.Damaged[0].Entry != "app/lost.txt" {
			t.Errorf("--include %s: exit %d, status %s, damaged %+v; want exit 1, failed, app/lost.txt damaged\n%s",
				include, r.code, out.Status, out.Damaged, r.stderr)
		}
	}
}

// TestAttackUnreadableXattrsRecordedAsNone: run as a user who may not read a folder, create
// --xattrs cannot read its user.* attributes (getxattr needs read permission); it warned
// (xattr, lost) but recorded "xattrs": {}, which the manifest's format says means "read, and
// there are none" (it omits them where they could not be read). restore --force --xattrs
// takes that record for the folder's whole set and took user.a away from the folder of that
// name in DEST, the very attribute the backup could not read.
func TestAttackUnreadableXattrsRecordedAsNone(t *testing.T) {
	t.Parallel()
	mustRoot(t) // a folder unreadable to nobody
	dir := sharedTempDir(t)
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"d": {kind: "dir"}, "f": {content: "f"}})
	makeTree(t, filepath.Join(dir, "out"), map[string]node{".": {kind: "dir", mode: 0o777}})
	if err := unix.Setxattr(filepath.Join(dir, "app", "d"), "user.a", []byte("1"), 0); err != nil {
		t.Skipf("no user.* attributes here: %v", err)
	}
	os.Chmod(filepath.Join(dir, "app", "d"), 0o711)
	arch := filepath.Join(dir, "out", "a.zip")
	r := backup(t, runOpts{dir: dir, uid: nobody}, "create", "--xattrs", "-o", arch, "app")
	mustExit(t, r, exitIncomplete)
	var m struct {
		Dirs []struct {
			Path   string
			Xattrs map[string]*string
		}
	}
	if err := json.Unmarshal([]byte(readZipGo(t, arch)[format.ManifestName]), &m); err != nil {
		t.Fatal(err)
	}
	for _, d := range m.Dirs {
		if d.Path == "app/d" && d.Xattrs != nil {
			t.Errorf("app/d recorded with xattrs %v, though user.a could not be read; want none recorded", d.Xattrs)
		}
	}
	dest := filepath.Join(dir, "dest")
	makeTree(t, filepath.Join(dest, "app"), map[string]node{"d": {kind: "dir"}})
	if err := unix.Setxattr(filepath.Join(dest, "app", "d"), "user.a", []byte("1"), 0); err != nil {
		t.Fatal(err)
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "--force", "--no-undo", "--xattrs", arch, dest), exitComplete)
	if _, err := unix.Getxattr(filepath.Join(dest, "app", "d"), "user.a", make([]byte, 16)); err != nil {
		t.Errorf("restore --force --xattrs took away user.a, which the backup could not read: %v", err)
	}
}

// TestAttackOneFileSystemReadsNoCacheTagAcross: --one-file-system is "do not cross into other
// file systems", but with --exclude-caches too the walk opened a mount point inside the
// SOURCE and read the CACHEDIR.TAG on the file system mounted there (a hung NFS server would
// hang the run; an automount would be triggered), and the receipt gave the tag as the rule.
// Another device is decided first, from the lstat alone: the rule is one-file-system.
func TestAttackOneFileSystemReadsNoCacheTagAcross(t *testing.T) {
	t.Parallel()
	mustRoot(t) // mounts a tmpfs
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a"}, "mnt": {kind: "dir"}, "cache/x": {content: "x"}})
	mnt := filepath.Join(dir, "app", "mnt")
	mountTmpfs(t, mnt, "64k")
	tag := "Signature: 8a477f597d28d172789f06886806bc55\n"
	makeTree(t, mnt, map[string]node{"CACHEDIR.TAG": {content: tag}, "other": {content: "on another file system"}})
	makeTree(t, filepath.Join(dir, "app", "cache"), map[string]node{"CACHEDIR.TAG": {content: tag}})
	for _, dry := range []bool{false, true} {
		args := []string{"create", "--one-file-system", "--exclude-caches", "--json", "-o", "a.zip", "--force", "app"}
		if dry {
			args = []string{"create", "--one-file-system", "--exclude-caches", "--json", "--dry-run", "app"}
		}
		r := backup(t, runOpts{dir: dir}, args...)
		mustExit(t, r, exitComplete)
		var rc format.Receipt
		if err := json.Unmarshal([]byte(r.stdout), &rc); err != nil {
			t.Fatal(err)
		}
		want := []format.Excluded{{Path: "app/cache", Rule: "CACHEDIR.TAG"}, {Path: "app/mnt", Rule: "one-file-system"}}
		if !slices.Equal(rc.Excluded, want) {
			t.Errorf("dry run %v: excluded %+v, want %+v", dry, rc.Excluded, want)
		}
	}
}
