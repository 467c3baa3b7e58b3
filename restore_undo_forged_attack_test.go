package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestAttackBeforeStateInUsersFolderForged: root restores --force into nobody's folder
// (/home/nobody/app: DEST's parent is nobody's home), and the before-state goes, by default,
// into DEST's parent: root's file, 0600, in a folder nobody owns. nobody cannot read it but
// may rename over it: he puts there an archive of his own making (here one that records a
// root-owned setuid program of his bytes). Root then runs the undo the restore printed,
// which always restores with --same-permissions: it made /home/nobody/app/app/sh a setuid root
// program of nobody's choosing, exit 0. The before-state is now refused (nothing restored,
// exit 1; --undo-dir exit 2) in a folder that another user than the restoring one (or root)
// owns, or that group or others may write into without the sticky bit, as any folder above it.
func TestAttackBeforeStateInUsersFolderForged(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := sharedTempDir(t)
	home := filepath.Join(dir, "home")
	makeTree(t, filepath.Join(home, "app"), map[string]node{"f": {content: "nobody's file\n"}})
	for _, p := range []string{home, filepath.Join(home, "app"), filepath.Join(home, "app/f")} {
		if err := os.Chown(p, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	dest := filepath.Join(home, "app")
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"f": {content: "archived\n"}})
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	// The forged before-state: a root-owned setuid program (made here by root; nobody
	// writes such a zip by hand just as well).
	makeTree(t, filepath.Join(dir, "evil/app"), map[string]node{"sh": {content: "#!/bin/sh\necho EVIL\n"}})
	syscall.Chmod(filepath.Join(dir, "evil/app/sh"), 0o4755)
	forged := filepath.Join(dir, "forged.zip")
	mustExit(t, backup(t, runOpts{dir: filepath.Join(dir, "evil")}, "create", "-q", "-o", forged, "app"), exitComplete)
	os.Chown(forged, nobody, nobody)

	r := backup(t, runOpts{dir: dir}, "restore", "--force", arch, dest)
	if r.code == exitComplete {
		undo := printedUndo(t, r.stderr)
		before := undo[len(undo)-2]
		mv := exec.Command("mv", "-f", forged, before)
		mv.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
		if out, err := mv.CombinedOutput(); err != nil {
			t.Fatalf("nobody could not replace the before-state %s: %v %s", before, err, out)
		}
		u := backup(t, runOpts{dir: dir}, undo...)
		var st syscall.Stat_t
		if syscall.Lstat(filepath.Join(dest, "app/sh"), &st) == nil && st.Uid == 0 && st.Mode&syscall.S_ISUID != 0 {
			t.Errorf("the printed undo (exit %d) made %s/app/sh a setuid root program of nobody's bytes, from the before-state root left in nobody's folder %s:\n%s",
				u.code, dest, home, u.stderr)
		}
		return
	}
	if r.code != exitFailed || !strings.Contains(r.stderr, "nothing restored") {
		t.Errorf("restore --force: exit %d, want %d, nothing restored:\n%s", r.code, exitFailed, r.stderr)
	}
	if _, err := os.Lstat(filepath.Join(dest, "app")); err == nil {
		t.Errorf("%s/app was restored, though the restore said nothing restored", dest)
	}
	if r := backup(t, runOpts{dir: dir}, "restore", "--force", "--undo-dir", home, arch, dest); r.code != exitUsage {
		t.Errorf("restore --force --undo-dir %s (nobody's): exit %d, want %d:\n%s", home, r.code, exitUsage, r.stderr)
	}
	// Nor through a symlink of nobody's to a folder of root's: the undo names the link,
	// which nobody may turn to a folder of his.
	link := filepath.Join(dir, "undo-link")
	os.Mkdir(filepath.Join(dir, "roots"), 0o700)
	if err := os.Symlink(filepath.Join(dir, "roots"), link); err != nil {
		t.Fatal(err)
	}
	os.Lchown(link, nobody, nobody)
	if r := backup(t, runOpts{dir: dir}, "restore", "--force", "--undo-dir", link, arch, dest); r.code != exitUsage {
		t.Errorf("restore --force --undo-dir %s (nobody's symlink): exit %d, want %d:\n%s", link, r.code, exitUsage, r.stderr)
	}
	// A folder of root's, or a sticky one (/tmp), takes it.
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "--force", "--undo-dir", dir, arch, dest), exitComplete)
	assertContent(t, filepath.Join(dest, "app/f"), "archived\n")
}
