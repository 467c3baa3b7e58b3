package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackRestoreLockHolderWithCapability: nobody's process holding DEST's flock (/srv,
// root's, 0755) was taken for a reader, as its euid is neither 0 nor DEST's owner's, though
// it holds CAP_DAC_OVERRIDE (a service user given it, as `setpriv --ambient-caps
// +dac_override` does) and so may write into DEST and every folder below it, as a restore
// of its own would. Root's `restore --force` exited 0 with "locked by pid N (uid 65534),
// which cannot write into it: ignored" and replaced app/a under the holder.
// Correct: a holder with CAP_DAC_OVERRIDE (effective or permitted) may write as root
// may: its lock is respected, exit 4, nothing written.
func TestAttackRestoreLockHolderWithCapability(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "flock")
	mustTool(t, "setpriv")
	f, st := readableLockFixture(t)
	holder := holdAsNobody(t, st.Ino, "--inh-caps=+dac_override", "--ambient-caps=+dac_override", "flock", f.dest, "sleep", "60")
	defer killGroup(holder)
	r := backup(t, runOpts{dir: f.dir}, "restore", "--force", "--no-undo", f.arch, f.dest)
	if r.code != exitLocked || !strings.Contains(r.stderr, "another restore is writing into it") {
		t.Errorf("restore while nobody with CAP_DAC_OVERRIDE holds DEST: exit %d, stderr %q; want 4, locked", r.code, r.stderr)
	}
	assertContent(t, filepath.Join(f.dest, "app/a"), "user's a\n")
}

// TestAttackRestoreLockGroupWritableNotHolders: DEST (/srv, root's, 0755) holds app,
// root:root 0775. nobody, in no group (setpriv --clear-groups), holds a flock on /srv and may
// write into neither /srv nor /srv/app. Root's `restore --force` was refused, exit 4
// "another restore is writing into it": mayWrite counts any group-writable folder, never
// reading the holder's groups, so anyone who may read DEST refuses every restore that
// passes through a folder writable by some group he is not in.
// Correct: the holder may not write into app (not its owner, not in its group, not
// world-writable): its lock is ignored as a reader's, exit 0, the warning said once.
func TestAttackRestoreLockGroupWritableNotHolders(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "flock")
	mustTool(t, "setpriv")
	f, st := readableLockFixture(t)
	app := filepath.Join(f.dest, "app")
	if err := os.Chown(app, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(app, 0o775); err != nil {
		t.Fatal(err)
	}
	holder := holdAsNobody(t, st.Ino, "flock", f.dest, "sleep", "60")
	defer killGroup(holder)
	r := backup(t, runOpts{dir: f.dir}, "restore", "--force", "--no-undo", f.arch, f.dest)
	if r.code != exitComplete || strings.Count(r.stderr, "ignored") != 1 {
		t.Errorf("restore while nobody, in no group, holds DEST: exit %d, stderr %q; want 0 and the lock ignored, said once", r.code, r.stderr)
	}
}

// TestRestoreLockHolderWritesThroughACL: app is root's, 0755, with an ACL entry letting
// nobody write (u:nobody:rwx, its mask the group bits): nobody holding DEST's flock may
// write into app, and its lock is respected, as the owner's would be, though nobody is
// not in app's group.
func TestRestoreLockHolderWritesThroughACL(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "flock")
	mustTool(t, "setpriv")
	mustTool(t, "setfacl")
	f, st := readableLockFixture(t)
	app := filepath.Join(f.dest, "app")
	if err := os.Chown(app, 0, 0); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("setfacl", "-m", "u:65534:rwx", app).CombinedOutput(); err != nil {
		t.Skipf("setfacl: %v %s", err, out)
	}
	holder := holdAsNobody(t, st.Ino, "flock", f.dest, "sleep", "60")
	defer killGroup(holder)
	r := backup(t, runOpts{dir: f.dir}, "restore", "--force", "--no-undo", f.arch, f.dest)
	if r.code != exitLocked || !strings.Contains(r.stderr, "another restore is writing into it") {
		t.Errorf("restore while nobody, who may write into app by its ACL, holds DEST: exit %d, stderr %q; want 4, locked", r.code, r.stderr)
	}
	assertContent(t, filepath.Join(f.dest, "app/a"), "user's a\n")
}

// TestAttackRestoreLockIgnoredBeforePlan: nobody holds DEST's flock (DEST root's, 0755) and
// the archive is no zip. `restore app.zip DEST` failed before any plan (exit 1, "not a zip
// archive"), saying nothing of the lock on stderr; `--json` of the same run listed the
// warning "locked by pid N (uid 65534), which cannot write into it: ignored …" all the
// same: the plan, which decides whether the lock is ignored (its holder may write below
// DEST), was never made.
// Correct: the warning is said in every mode or in none: here, in none.
func TestAttackRestoreLockIgnoredBeforePlan(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "flock")
	mustTool(t, "setpriv")
	f, st := readableLockFixture(t)
	if err := os.WriteFile(f.arch, []byte("no zip at all\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	holder := holdAsNobody(t, st.Ino, "flock", f.dest, "sleep", "60")
	defer killGroup(holder)
	text := backup(t, runOpts{dir: f.dir}, "restore", f.arch, f.dest)
	js := backup(t, runOpts{dir: f.dir}, "restore", "--json", f.arch, f.dest)
	if text.code != exitFailed || js.code != exitFailed {
		t.Fatalf("restore of no zip: exit %d, --json exit %d; want 1", text.code, js.code)
	}
	if strings.Contains(text.stderr, "ignored") || strings.Contains(js.stdout, "ignored") {
		t.Errorf("restore failed before its plan: stderr %q, --json %s; want no word of the lock ignored in either", text.stderr, js.stdout)
	}
}
