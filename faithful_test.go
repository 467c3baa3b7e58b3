package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// treeTime is every mtime of faithfulTree: its fraction of a second is more than a zip holds.
var treeTime = time.Date(2001, 2, 3, 4, 5, 6, 123456789, time.UTC)

// faithfulTree lays out, as root, a tree with every kind of entry a system tree holds:
// absolute, relative, dangling and directory symlinks, a loop, hard links within and across
// folders, files of other users and groups, a setuid binary, a file with a capability, one
// with a POSIX ACL, one with a user attribute, and a FIFO (still skipped). Times are set
// last, links included.
func faithfulTree(t *testing.T, root string) {
	t.Helper()
	app := filepath.Join(root, "app")
	makeTree(t, app, map[string]node{
		"etc/hosts":       {content: "127.0.0.1 localhost\n"},
		"etc/shadow":      {content: "root:*:1::::::\n", mode: 0o640},
		"etc/sub/conf":    {content: "x=1\n"},
		"bin/ping":        {content: "ELF ping\n", mode: 0o755},
		"bin/su":          {content: "ELF su\n", mode: 0o755},
		"var/acl":         {content: "shared\n"},
		"var/empty":       {kind: "dir"},
		"share/a":         {content: "linked\n"},
		"share/deep/note": {content: "note\n"},
	})
	run := func(name string, args ...string) {
		t.Helper()
		if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %q: %v\n%s", name, args, err, out)
		}
	}
	p := func(rel string) string { return filepath.Join(app, rel) }
	for _, l := range [][2]string{{"/etc/passwd", "etc/abs"}, {"../share/a", "etc/rel"}, {"nowhere", "etc/dangling"},
		{"sub", "etc/dirlink"}, {"loop2", "etc/loop1"}, {"loop1", "etc/loop2"}} {
		if err := os.Symlink(l[0], p(l[1])); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range [][2]string{{"share/a", "share/b"}, {"share/a", "etc/sub/a-link"}, {"share/deep/note", "var/note"}} {
		if err := os.Link(p(l[0]), p(l[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(p("var/fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Lchown(p("etc/shadow"), 0, 42)
	os.Lchown(p("var/acl"), nobody, nobody)
	os.Lchown(p("etc/rel"), nobody, 1)
	os.Lchown(p("etc/sub"), 1, 1)
	os.Lchown(p("bin/su"), 1, 1)
	os.Chmod(p("bin/su"), 0o4755|os.ModeSetuid) // after the chown, which clears it
	os.Chmod(p("etc/sub"), 0o2775|os.ModeSetgid)
	run("setfattr", "-n", "security.capability", "-v", "0x0100000200200000000000000000000000000000", p("bin/ping"))
	run("setfattr", "-n", "user.origin", "-v", "backup test", p("etc/hosts"))
	run("setfacl", "-m", "u:65534:rw,g:1:r", p("var/acl"))
	run("setfacl", "-d", "-m", "u:65534:rwx", p("var/empty"))
	ts := []unix.Timespec{unix.NsecToTimespec(treeTime.UnixNano()), unix.NsecToTimespec(treeTime.UnixNano())}
	err := filepath.Walk(root, func(path string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return unix.UtimesNanoAt(unix.AT_FDCWD, path, ts, unix.AT_SYMLINK_NOFOLLOW)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// treeState describes a tree as the checks see it: per path (in find's order) the
// type, owner and group by name, mode, mtime to the nanosecond, link count and symlink target; then
// getfattr's and getfacl's dumps.
func treeState(t *testing.T, dir string) string {
	t.Helper()
	out := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %q in %s: %v\n%s", name, args, dir, err, b)
		}
		return string(b)
	}
	return out("find", ".", "-printf", `%p %y %u %g %#m %TY-%Tm-%Td %TT %n %l\n`) +
		out("getfattr", "-R", "-h", "-d", "-m", "-", ".") + out("getfacl", "-R", "-P", "-p", ".")
}

// TestFaithfulTree backs up a system-like tree with --symlinks store --xattrs and restores it
// as root: diff -r --no-dereference, owners, groups, modes, mtimes (links included), link
// counts, extended attributes and ACLs all equal the source, but for the FIFO, which is
// skipped and listed. unzip and bsdtar recreate the symlinks from the same archive.
func TestFaithfulTree(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	for _, tool := range []string{"setfattr", "getfattr", "setfacl", "getfacl", "unzip", "bsdtar"} {
		mustTool(t, tool)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	faithfulTree(t, src)
	arch := filepath.Join(dir, "app.zip")
	r := backup(t, runOpts{dir: dir}, "create", "--symlinks", "store", "--xattrs", "-o", arch, filepath.Join(src, "app"))
	if r.code != exitComplete || !strings.Contains(r.stderr, "backup: complete: 11 files, 6 symlinks, ") {
		t.Fatalf("create: exit %d, stderr %q", r.code, r.stderr)
	}
	rc := readReceipt(t, arch+".receipt.json")
	if c := rc.Counts; c.Symlinks != 6 || c.LinkGroups != 2 || c.Files != 11 || c.Skipped != 1 {
		t.Errorf("counts %+v, want 6 symlinks, 2 link groups, 11 files, 1 skipped (the FIFO)", c)
	}
	if r := backup(t, runOpts{dir: dir}, "verify", arch); r.code != exitComplete {
		t.Errorf("verify: exit %d, stderr %q", r.code, r.stderr)
	}
	unzipTest(t, arch)
	dest := filepath.Join(dir, "dest")
	r = backup(t, runOpts{dir: dir}, "restore", "--xattrs", "--same-permissions", arch, dest)
	if r.code != exitComplete || !strings.Contains(r.stderr, "6 symlinks") {
		t.Fatalf("restore: exit %d, stderr %q", r.code, r.stderr)
	}
	// The FIFO is skipped by design; everything else must match.
	os.Remove(filepath.Join(src, "app/var/fifo"))
	os.Chtimes(filepath.Join(src, "app/var"), time.Time{}, treeTime)
	if out, err := exec.Command("diff", "-r", "--no-dereference", filepath.Join(src, "app"), filepath.Join(dest, "app")).CombinedOutput(); err != nil {
		t.Errorf("diff -r --no-dereference: %v\n%s", err, out)
	}
	if got, want := treeState(t, filepath.Join(dest, "app")), treeState(t, filepath.Join(src, "app")); got != want {
		t.Errorf("restored tree differs from the source:\n%s", lineDiff(want, got))
	}
	for _, tool := range [][]string{{"unzip", "-q"}, {"bsdtar", "-xf"}} {
		out := filepath.Join(dir, tool[0])
		os.Mkdir(out, 0o755)
		cmd := exec.Command(tool[0], append(tool[1:], arch)...)
		cmd.Dir = out
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", tool[0], err, b)
		}
		for _, l := range []string{"etc/abs", "etc/rel", "etc/dangling", "etc/dirlink", "etc/loop1"} {
			want, _ := os.Readlink(filepath.Join(src, "app", l))
			if got, err := os.Readlink(filepath.Join(out, "app", l)); err != nil || got != want {
				t.Errorf("%s made app/%s: %q, %v; want a symlink to %q", tool[0], l, got, err, want)
			}
		}
	}
}

// lineDiff lists the lines only one of want and got holds.
func lineDiff(want, got string) string {
	var b strings.Builder
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	w, g := in(want), in(got)
	for _, l := range strings.Split(want, "\n") {
		if !g[l] {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range strings.Split(got, "\n") {
		if !w[l] {
			b.WriteString("+ " + l + "\n")
		}
	}
	return b.String()
}
