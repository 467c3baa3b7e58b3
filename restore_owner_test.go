package main

import (
	"crypto/sha256"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"backup/format"
)

// TestRestoreOwnersAsNobody restores, as uid 65534, a backup of files owned by root and
// daemon, one of them setuid with a capability, even with --same-permissions --xattrs: no
// owner changes, no setuid bit, the capability (which follows the setuid rule) not set but a
// warning, and none of it is an error (exit 0).
func TestRestoreOwnersAsNobody(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := sharedTempDir(t)
	src := filepath.Join(dir, "src")
	makeTree(t, filepath.Join(src, "app"), map[string]node{
		"su":      {content: "ELF\n", mode: 0o755},
		"sub/a":   {content: "a\n"},
		"sub/l":   {kind: "symlink", content: "a"},
		"sub/dir": {kind: "dir"},
	})
	os.Lchown(filepath.Join(src, "app/su"), 1, 1)
	os.Chmod(filepath.Join(src, "app/su"), 0o755|os.ModeSetuid|os.ModeSetgid)
	os.Lchown(filepath.Join(src, "app/sub"), 1, 1)
	capNetRaw := []byte{1, 0, 0, 2, 0, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	if err := unix.Setxattr(filepath.Join(src, "app/su"), "security.capability", capNetRaw, 0); err != nil {
		t.Fatal(err)
	}
	arch := filepath.Join(dir, "app.zip")
	if r := backup(t, runOpts{dir: dir}, "create", "--symlinks", "store", "--xattrs", "-o", arch, filepath.Join(src, "app")); r.code != exitComplete {
		t.Fatalf("create: exit %d, stderr %q", r.code, r.stderr)
	}
	os.Chmod(arch, 0o644)
	dest := filepath.Join(dir, "dest")
	r := backup(t, runOpts{dir: dir, uid: nobody}, "restore", "--same-permissions", "--xattrs", arch, dest)
	want := "warning: app/su: security.capability not set: only with --same-permissions, as root, with the recorded owner\n"
	if r.code != exitComplete || !strings.Contains(r.stderr, want) {
		t.Fatalf("restore as nobody: exit %d, stderr %q; want %d and %q", r.code, r.stderr, exitComplete, want)
	}
	for _, name := range []string{"app", "app/su", "app/sub", "app/sub/a", "app/sub/l", "app/sub/dir"} {
		var st syscall.Stat_t
		if err := syscall.Lstat(filepath.Join(dest, name), &st); err != nil {
			t.Fatal(err)
		}
		if st.Uid != nobody || st.Gid != nobody || st.Mode&(syscall.S_ISUID|syscall.S_ISGID) != 0 {
			t.Errorf("%s: owner %d:%d, mode %o; want %d:%d without setuid or setgid", name, st.Uid, st.Gid, st.Mode, nobody, nobody)
		}
	}
}

// hostileBackup writes an archive that looks made by backup: its manifest (v2) lists the
// symlinks and files given, so that restore would create the links.
func hostileBackup(t *testing.T, path string, entries []hostileEntry) {
	t.Helper()
	m := format.Manifest{Schema: format.ManifestSchema, ToolVersion: "x", Status: "complete", Files: []format.File{},
		Symlinks: []format.Symlink{}, Skipped: []format.Skipped{}, Excluded: []format.Excluded{}, Warnings: []format.Warning{}}
	for _, e := range entries {
		if e.symlink {
			m.Symlinks = append(m.Symlinks, format.Symlink{Path: e.name, Target: e.body})
			continue
		}
		sum := sha256.Sum256([]byte(e.body))
		m.Files = append(m.Files, format.File{Path: e.name, Size: int64(len(e.body)), SHA256: format.Digest(sum)})
	}
	data, err := json.Marshal(&m)
	if err != nil {
		t.Fatal(err)
	}
	writeHostileZip(t, path, append(entries, hostileEntry{name: format.ManifestName, body: string(data)}))
}

// TestRestoreHostileStoredSymlink restores backups whose stored symlinks lead out of DEST
// with entries through them: refused, nothing written anywhere (DEST and where the links
// point included); verify reports the same names.
func TestRestoreHostileStoredSymlink(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		entries []hostileEntry
		want    string
	}{
		{"link to / then a file through it", []hostileEntry{{name: "d", body: "/", symlink: true}, {name: "d/etc/x", body: "x"}},
			"d/etc/x: unsafe name: below d, a symlink entry"},
		{"link out of DEST then a file through it", []hostileEntry{{name: "app/", body: ""}, {name: "app/up", body: "../..", symlink: true},
			{name: "app/up/evil", body: "x"}}, "app/up/evil: unsafe name: below app/up, a symlink entry"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			arch := filepath.Join(dir, "in", "hostile.zip")
			os.Mkdir(filepath.Dir(arch), 0o755)
			hostileBackup(t, arch, tt.entries)
			work := filepath.Join(dir, "work")
			os.Mkdir(work, 0o755)
			r := backup(t, runOpts{dir: work}, "restore", "--force", arch, filepath.Join(work, "dest"))
			if r.code != exitFailed || !strings.Contains(r.stderr, tt.want+"\n") || !strings.Contains(r.stderr, "refused, nothing written") {
				t.Errorf("exit %d stderr %q; want %d and %q", r.code, r.stderr, exitFailed, tt.want)
			}
			if got := listTree(t, dir); !slices.Equal(got, []string{"in/", "in/hostile.zip", "work/"}) {
				t.Errorf("files after the restore: %q, want only the archive", got)
			}
			if r := backup(t, runOpts{dir: work}, "verify", arch); r.code != exitFailed || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("verify: exit %d stderr %q; want %d and %q", r.code, r.stderr, exitFailed, tt.want)
			}
		})
	}
}

// TestRestorePrivilegedXattrs: security.* and trusted.* attributes (a capability stands in
// for a setuid bit) follow the setuid rule: set only with --same-permissions, as root, with
// the recorded owner; otherwise each is a warning and the file has none. user.* attributes
// come back with --xattrs alone.
func TestRestorePrivilegedXattrs(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := t.TempDir()
	su := filepath.Join(dir, "src/app/su")
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"su": {content: "ELF\n", mode: 0o755}})
	os.Lchown(su, 1, 1)
	capNetRaw := []byte{1, 0, 0, 2, 0, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	for name, v := range map[string][]byte{"security.capability": capNetRaw, "trusted.t": []byte("t"), "user.u": []byte("u")} {
		if err := unix.Lsetxattr(su, name, v, 0); err != nil {
			t.Fatal(err)
		}
	}
	arch := filepath.Join(dir, "app.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--xattrs", "-o", arch, "src/app"), exitComplete)
	tests := []struct {
		name       string
		args       []string
		privileged bool
	}{
		{"--xattrs", []string{"--xattrs"}, false},
		{"--no-same-owner", []string{"--xattrs", "--same-permissions", "--no-same-owner"}, false},
		{"--same-permissions", []string{"--xattrs", "--same-permissions"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dest := filepath.Join(t.TempDir(), "dest")
			r := backup(t, runOpts{dir: dir}, append(append([]string{"restore"}, tt.args...), arch, dest)...)
			mustExit(t, r, exitComplete)
			got := filepath.Join(dest, "app/su")
			for name, privileged := range map[string]bool{"security.capability": true, "trusted.t": true, "user.u": false} {
				_, err := unix.Lgetxattr(got, name, make([]byte, 64))
				if want := !privileged || tt.privileged; (err == nil) != want {
					t.Errorf("%s: getxattr: %v, want it set: %v", name, err, want)
				}
				warning := "warning: app/su: " + name + " not set: only with --same-permissions, as root, with the recorded owner\n"
				if want := privileged && !tt.privileged; strings.Contains(r.stderr, warning) != want {
					t.Errorf("stderr %q; want the warning %q: %v", r.stderr, warning, want)
				}
			}
		})
	}
}

// TestRestorePresentOthersMayWrite: as root, a file already present with the archived
// bytes but another user's (who could rewrite it between the check of its bytes and the
// chown) is not given its owner and setuid bit in place: a plain restore leaves it as it is
// with a warning, and --force replaces it with a file of its own, saved in a before-state.
func TestRestorePresentOthersMayWrite(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"tool": {content: "#!/bin/sh\n"}})
	syscall.Chmod(filepath.Join(dir, "src/app/tool"), 0o4755)
	arch := filepath.Join(dir, "t.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	tool := filepath.Join(dest, "app/tool")
	makeTree(t, filepath.Join(dest, "app"), map[string]node{"tool": {content: "#!/bin/sh\n", mode: 0o755}})
	os.Chown(tool, nobody, nobody)
	owner := func() (uint32, uint32) {
		var st syscall.Stat_t
		if err := syscall.Stat(tool, &st); err != nil {
			t.Fatal(err)
		}
		return st.Uid, st.Mode & 0o7777
	}
	r := backup(t, runOpts{dir: dir}, "restore", "--same-permissions", arch, dest)
	if want := "warning: app/tool: another user than root may write to it"; r.code != exitComplete || !strings.Contains(r.stderr, want) {
		t.Errorf("restore: exit %d, stderr %q; want 0 and %q", r.code, r.stderr, want)
	}
	if uid, mode := owner(); uid != nobody || mode != 0o755 {
		t.Errorf("kept app/tool: uid %d mode %o; want it left as nobody's, 755", uid, mode)
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "-q", "--force", "--same-permissions", arch, dest), exitComplete)
	if uid, mode := owner(); uid != 0 || mode != 0o4755 {
		t.Errorf("replaced app/tool: uid %d mode %o; want root's, 4755", uid, mode)
	}
	states, _ := filepath.Glob(filepath.Join(dir, "dest-before-restore-*.zip"))
	if len(states) != 1 {
		t.Fatalf("before-states %q", states)
	}
}

// TestAttackPresentFileRewrittenBeforeSetuid: root restores, with --same-permissions, an
// archive holding app/tool, recorded as root's and setuid (04755), into a DEST where
// app/tool already holds the same bytes but belongs to nobody (0755), who keeps it open for
// writing. The plan hashes it (already present, metadata to fix); fixMeta opens it, fstats
// it (same inode and ctime as the plan saw) and then calls fchown, fchmod, futimens. strace
// holds the restore at that fchown, and nobody writes other bytes through the descriptor it
// held all along: the restore then makes the file root's and setuid, and says "1 file
// already there", complete, exit 0. The result is a setuid-root program with nobody's
// content: a local privilege escalation, and a receipt of a file "already there" whose
// bytes are not the archive's. Correct behaviour: owner and setuid are never given in place
// to a file that someone else could write while the restore works on it (write a file of
// the restore's own instead, as --force does), or the content is checked again after the
// owner and mode are set, and the file is not kept when it differs.
func TestAttackPresentFileRewrittenBeforeSetuid(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "strace")
	dir := sharedTempDir(t)
	const good, evil = "#!/bin/sh\necho good\n", "#!/bin/sh\necho EVIL\n" // same length
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"tool": {content: good}})
	syscall.Chmod(filepath.Join(dir, "src/app/tool"), 0o4755)
	arch := filepath.Join(dir, "t.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	tool := filepath.Join(dest, "app/tool")
	os.MkdirAll(filepath.Join(dest, "app"), 0o755)
	os.WriteFile(tool, []byte(good), 0o755)
	for _, p := range []string{dest, filepath.Join(dest, "app"), tool} {
		os.Chown(p, nobody, nobody)
	}
	r, b, st := rewriteAtFchown(t, dir, tool, evil, "--same-permissions", arch, dest)
	if string(b) != good && st.Uid == 0 && st.Mode&syscall.S_ISUID != 0 {
		t.Errorf("app/tool is root's and setuid (mode %o) with nobody's bytes %q; restore exit %d:\n%s", st.Mode&0o7777, b, r.code, r.stderr)
	}
}

// TestAttackPresentRootOwnedNotGivenOwner: root restores with --no-same-owner (every file
// root's), then runs the same restore again to give the files their recorded owners, as
// docs/restore.md says a re-run does ("only its owner, mode and mtime are set where they
// differ"). app/f is root's, mode 0644: no user but root (the restoring user) can write to
// it, so nobody could rewrite it between the check of its bytes and the chown. Yet the
// re-run warns "another user than its recorded owner may write to it" (false: only root
// can), leaves it root's, and exits 0; only --force, which rewrites every such file, gives
// owners. The same for any tree root copied in (cp -r, rsync without -o). Correct: a file
// that only root (the restoring user) or its recorded owner can write is given its owner
// in place, without a warning: the re-run makes app/f 1000:1000.
func TestAttackPresentRootOwnedNotGivenOwner(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"f": {content: "hi\n"}})
	os.Chown(filepath.Join(dir, "src/app/f"), 1000, 1000)
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "-q", "--no-same-owner", "--numeric-owner", arch, dest), exitComplete)
	r := backup(t, runOpts{dir: dir}, "restore", "--numeric-owner", arch, dest)
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(dest, "app/f"), &st); err != nil {
		t.Fatal(err)
	}
	if r.code != exitComplete || strings.Contains(r.stderr, "warning") || st.Uid != 1000 {
		t.Errorf("re-run as root over its own root-owned 0644 copy: exit %d, uid %d, stderr %q; want 0, uid 1000, no warning", r.code, st.Uid, r.stderr)
	}
}

// TestAttackPresentSharedGroupFileMtime: a shared project folder (setgid folder, umask
// 002): app/f is recorded as 1000:1000, mode 0664, and DEST holds it with the same bytes,
// owner and mode; only its mtime differs (a checkout touched it). Root's restore changes
// neither owner nor mode, so no setuid program or gift of ownership can come of it, and a
// group member may rewrite the file after the restore as before it; yet it warns "another
// user than its recorded owner may write to it" and does not set the mtime. Correct: when
// the owner is already the recorded one and the mode gains no setuid/setgid bit, the mtime
// is set in place without a warning.
func TestAttackPresentSharedGroupFileMtime(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"f": {content: "hi\n"}})
	f := filepath.Join(dir, "src/app/f")
	os.Chown(f, 1000, 1000)
	os.Chmod(f, 0o664)
	old := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	os.Chtimes(f, old, old)
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	os.MkdirAll(filepath.Join(dest, "app"), 0o2775)
	os.Chmod(filepath.Join(dest, "app"), 0o2775)
	g := filepath.Join(dest, "app/f")
	os.WriteFile(g, []byte("hi\n"), 0o664)
	os.Chmod(g, 0o664)
	os.Chown(g, 1000, 1000)
	r := backup(t, runOpts{dir: dir}, "restore", "--numeric-owner", arch, dest)
	info, err := os.Stat(g)
	if err != nil {
		t.Fatal(err)
	}
	if r.code != exitComplete || strings.Contains(r.stderr, "warning") || !info.ModTime().Equal(old) {
		t.Errorf("restore of a group-writable file with its recorded owner and mode: exit %d, mtime %s, stderr %q; want 0, mtime %s, no warning", r.code, info.ModTime().UTC(), r.stderr, old)
	}
}

// TestAttackPresentOwnerRewritesBeforeSetgid: the in-place check trusts a file's recorded
// owner to write to it, which is harmless for its owner's own setuid bit but not for a
// group the owner is not in. The archive holds app/tool recorded as nobody:root (gid 0),
// mode 02755 (setgid root's group); DEST holds the same bytes as nobody:nobody 0755.
// nobody keeps it open for writing, and writes other bytes (same length) while root's
// restore --same-permissions --numeric-owner is held at its fchown (after the plan hashed
// the file). The file is nobody's, as recorded, and no group or other may write, so
// inPlaceRisk allows it: the restore then gives it gid 0 and 02755, says it was "already
// there", and exits 0. The result: a setgid-root-group program with nobody's bytes (read
// /etc/shadow-like root:0640 files, write group-0 files): a privilege escalation. Correct:
// a setgid bit (or a group) is not given in place to a file that a user outside that group
// may write (treat the owner as "another user" when the recorded gid differs from the
// file's and the mode to give is setgid), or the bytes are checked again after the chmod.
func TestAttackPresentOwnerRewritesBeforeSetgid(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "strace")
	dir := sharedTempDir(t)
	const good, evil = "#!/bin/sh\necho good\n", "#!/bin/sh\necho EVIL\n" // same length
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"tool": {content: good}})
	os.Chown(filepath.Join(dir, "src/app/tool"), nobody, 0)
	syscall.Chmod(filepath.Join(dir, "src/app/tool"), 0o2755)
	arch := filepath.Join(dir, "t.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	tool := filepath.Join(dest, "app/tool")
	os.MkdirAll(filepath.Join(dest, "app"), 0o755)
	os.WriteFile(tool, []byte(good), 0o755)
	os.Chown(tool, nobody, nobody)
	r, b, st := rewriteAtFchown(t, dir, tool, evil, "--same-permissions", "--numeric-owner", arch, dest)
	if string(b) != good && st.Gid == 0 && st.Mode&syscall.S_ISGID != 0 {
		t.Errorf("app/tool is setgid root's group (%d:%d, mode %o) with nobody's bytes %q; restore exit %d:\n%s", st.Uid, st.Gid, st.Mode&0o7777, b, r.code, r.stderr)
	}
}

// rewriteAtFchown runs backup restore --jobs 1 with args under strace, which holds its first
// fchown, while nobody, who opened the file at path for writing before the restore started,
// writes evil into it; it returns the restore's result, then the file's bytes and stat.
func rewriteAtFchown(t *testing.T, dir, path, evil string, args ...string) (result, []byte, syscall.Stat_t) {
	t.Helper()
	log := filepath.Join(dir, "strace.log")
	attacker := exec.Command("bash", "-c", `exec 3<>"$1"; for i in $(seq 3000); do grep -q "fchown(" "$2" 2>/dev/null && break; sleep 0.005; done; printf "$3" >&3`,
		"attacker", path, log, evil)
	attacker.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	if err := attacker.Start(); err != nil {
		t.Fatal(err)
	}
	waitForPath("/proc/" + strconv.Itoa(attacker.Process.Pid) + "/fd/3")
	cmd := exec.Command("strace", append([]string{"-f", "-o", log, "-e", "trace=fchown", "-e", "inject=fchown:delay_enter=1500000:when=1",
		binary, "restore", "--jobs", "1"}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.Run()
	// A restore that never called fchown (it gave no owner in place) is over: the attacker,
	// who writes only while one is held, has nothing left to wait for.
	attacker.Process.Kill()
	attacker.Wait()
	b, _ := os.ReadFile(path)
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return result{code: cmd.ProcessState.ExitCode(), stderr: stderr.String()}, b, st
}
