package main

import (
	"crypto/sha256"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"backup/format"
)

// TestRestoreForceKeepsSymlinks: restore --force over symlinks in DEST that point outside it
// saves each link as a link in the before-state (never what it points to), and the undo puts
// the links back as links; the files outside are never read or changed.
func TestRestoreForceKeepsSymlinks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src"), map[string]node{"hosts": {content: "127.0.0.1 localhost\n"}, "app/conf": {content: "conf\n"}})
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/hosts", "src/app"), exitComplete)
	outside := filepath.Join(dir, "outside")
	makeTree(t, outside, map[string]node{"secret": {content: "SECRET\n"}, "secret2": {content: "SECRET2\n"}})
	dest := filepath.Join(dir, "dest")
	makeTree(t, dest, map[string]node{
		"hosts":    {kind: "symlink", content: filepath.Join(outside, "secret")},
		"app/conf": {kind: "symlink", content: "../../outside/secret2"},
	})

	r := backup(t, runOpts{dir: dir}, "restore", "--force", "--json", arch, dest)
	out := restoreJSONOf(t, r)
	if r.code != exitComplete || out.Undo == nil {
		t.Fatalf("restore --force: exit %d, undo %v\n%s", r.code, out.Undo, r.stderr)
	}
	assertContent(t, filepath.Join(dest, "hosts"), "127.0.0.1 localhost\n")
	held := readZipGo(t, out.Undo.Archive)
	for name, target := range map[string]string{"hosts": filepath.Join(outside, "secret"), "app/conf": "../../outside/secret2"} {
		if got := held[name]; got != target {
			t.Errorf("before-state holds %s as %q, want the link's target %q", name, got, target)
		}
	}
	for name, data := range held {
		if strings.Contains(data, "SECRET") {
			t.Errorf("before-state entry %s holds an outside file's bytes: %q", name, data)
		}
	}

	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "--force", "--no-undo", out.Undo.Archive, dest), exitComplete)
	for name, target := range map[string]string{"hosts": filepath.Join(outside, "secret"), "app/conf": "../../outside/secret2"} {
		if got, err := os.Readlink(filepath.Join(dest, name)); err != nil || got != target {
			t.Errorf("after the undo %s: readlink %q, %v; want a symlink to %q", name, got, err, target)
		}
	}
	assertContent(t, filepath.Join(outside, "secret"), "SECRET\n")
	assertContent(t, filepath.Join(outside, "secret2"), "SECRET2\n")
}

// craftedBeforeState writes an archive that looks like a restore's before-state: a manifest
// (v2) listing the files given, and the created paths.
func craftedBeforeState(t *testing.T, path string, files []hostileEntry, created []format.Created) {
	t.Helper()
	m := format.Manifest{Schema: format.ManifestSchema, ToolVersion: "x", Status: "complete", Files: []format.File{},
		Symlinks: []format.Symlink{}, Skipped: []format.Skipped{}, Excluded: []format.Excluded{}, Warnings: []format.Warning{},
		Created: created}
	for _, e := range files {
		sum := sha256.Sum256([]byte(e.body))
		m.Files = append(m.Files, format.File{Path: e.name, Size: int64(len(e.body)), SHA256: format.Digest(sum)})
	}
	data, err := json.Marshal(&m)
	if err != nil {
		t.Fatal(err)
	}
	writeHostileZip(t, path, append(files, hostileEntry{name: format.ManifestName, body: string(data)}))
}

// TestRestoreCreatedThroughSymlink restores a crafted before-state whose created paths lie
// below a symlink in DEST that points outside: the file outside is neither read (into the
// undo's own before-state) nor removed, and a warning names the path.
func TestRestoreCreatedThroughSymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	outside := filepath.Join(dir, "outside")
	makeTree(t, outside, map[string]node{"victim": {content: "VICTIM\n"}})
	dest := filepath.Join(dir, "dest")
	makeTree(t, dest, map[string]node{"lnk": {kind: "symlink", content: outside}, "app/a": {content: "old\n"}})
	arch := filepath.Join(dir, "crafted.zip")
	sum := sha256.Sum256([]byte("VICTIM\n"))
	craftedBeforeState(t, arch, []hostileEntry{{name: "app/a", body: "new\n"}}, []format.Created{
		{Path: "lnk/victim", Type: format.CreatedFile, Size: 7, SHA256: format.Digest(sum).String()},
	})

	r := backup(t, runOpts{dir: dir}, "restore", "--force", "--json", arch, dest)
	out := restoreJSONOf(t, r)
	want := "warning: lnk/victim: created by the restore undone, not removed: would pass through lnk, a symlink in the destination\n"
	if r.code != exitComplete || !strings.Contains(r.stderr, want) {
		t.Errorf("exit %d stderr %q; want 0 and %q", r.code, r.stderr, want)
	}
	assertContent(t, filepath.Join(outside, "victim"), "VICTIM\n")
	if out.Undo != nil {
		for name, data := range readZipGo(t, out.Undo.Archive) {
			if strings.Contains(data, "VICTIM") {
				t.Errorf("the before-state holds the outside file as %s", name)
			}
		}
	}
}

// TestRestoreForceRefusesSpecialFiles: a FIFO, a device node or a socket where the archive has a file
// cannot be saved in a before-state, so restore --force refuses to replace it (as it does a
// folder), changing nothing; with --no-undo it replaces them.
func TestRestoreForceRefusesSpecialFiles(t *testing.T) {
	t.Parallel()
	mustRoot(t) // the device node
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"f": {content: "f\n"}, "n": {content: "n\n"}, "s": {content: "s\n"}, "ok": {content: "ok\n"}})
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	makeTree(t, dest, map[string]node{"app/f": {kind: "fifo"}, "app/n": {kind: "device"}, "app/s": {kind: "socket"}, "app/ok": {content: "old\n"}})

	r := backup(t, runOpts{dir: dir}, "restore", "--force", arch, dest)
	for _, want := range []string{
		"app/f: is a FIFO in the destination, which a before-state cannot hold (--no-undo replaces it)\n",
		"app/n: is a device in the destination, which a before-state cannot hold (--no-undo replaces it)\n",
		"app/s: is a socket in the destination, which a before-state cannot hold (--no-undo replaces it)\n",
		"backup restore: refused, nothing written",
	} {
		if r.code != exitFailed || !strings.Contains(r.stderr, want) {
			t.Errorf("exit %d stderr %q; want %d and %q", r.code, r.stderr, exitFailed, want)
		}
	}
	for name, mode := range map[string]os.FileMode{"app/f": os.ModeNamedPipe, "app/n": os.ModeDevice | os.ModeCharDevice, "app/s": os.ModeSocket} {
		if info, err := os.Lstat(filepath.Join(dest, name)); err != nil || info.Mode().Type() != mode {
			t.Errorf("%s after the refusal: %v %v, want it untouched", name, info, err)
		}
	}
	assertContent(t, filepath.Join(dest, "app/ok"), "old\n")
	if undo, _ := filepath.Glob(filepath.Join(dir, "dest-before-restore-*")); len(undo) > 0 {
		t.Errorf("a refused restore wrote %q", undo)
	}

	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "--force", "--no-undo", arch, dest), exitComplete)
	compareTrees(t, filepath.Join(dir, "src/app"), filepath.Join(dest, "app"))
}

// TestRestorePresentHardLink: a file DEST holds with the archived content that is also a
// hard link to a file outside DEST is never given its owner, mode or mtime in place (that
// would change the outside file): a plain restore keeps it with a warning, --force replaces
// it with a file of its own.
func TestRestorePresentHardLink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"f": {content: "same\n", mode: 0o640}})
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	outside := filepath.Join(dir, "outside")
	makeTree(t, outside, map[string]node{"f": {content: "same\n", mode: 0o600}})
	old := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	os.Chtimes(filepath.Join(outside, "f"), old, old)
	dest := filepath.Join(dir, "dest")
	os.MkdirAll(filepath.Join(dest, "app"), 0o755)
	if err := os.Link(filepath.Join(outside, "f"), filepath.Join(dest, "app/f")); err != nil {
		t.Fatal(err)
	}
	unchanged := func(when string) {
		t.Helper()
		info, err := os.Stat(filepath.Join(outside, "f"))
		if err != nil || info.Mode() != 0o600 || !info.ModTime().Equal(old) {
			t.Errorf("%s: the outside file is %v; want mode 0600 and mtime %v", when, info, old)
		}
	}

	r := backup(t, runOpts{dir: dir}, "restore", arch, dest)
	want := "warning: app/f: a hard link (2 names): owner, mode and mtime not set in place, where they would change the other names too (--force replaces it)\n"
	if r.code != exitComplete || !strings.Contains(r.stderr, want) {
		t.Errorf("restore: exit %d stderr %q; want 0 and %q", r.code, r.stderr, want)
	}
	unchanged("after a plain restore")

	r = backup(t, runOpts{dir: dir}, "restore", "--force", "--json", arch, dest)
	if out := restoreJSONOf(t, r); r.code != exitComplete || out.Files != 1 {
		t.Errorf("restore --force: exit %d, files %d; want 0 and 1\n%s", r.code, out.Files, r.stderr)
	}
	unchanged("after restore --force")
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(dest, "app/f"), &st); err != nil || st.Nlink != 1 || st.Mode&0o7777 != 0o640 {
		t.Errorf("app/f after --force: %+v %v; want a file of its own, mode 0640", st, err)
	}
}
