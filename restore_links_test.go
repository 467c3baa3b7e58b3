package main

import (
	"archive/zip"
	"encoding/json"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"backup/format"
)

// TestRestoreRerunHardLinks: restoring an archive with a hard-link group twice into one
// DEST. The second run found a and b already present (one file, two names) and linked b to
// a again: a rename of a link onto its own file does nothing, so a third name,
// .b.link-TOKEN-1, stayed in DEST for good (the journal that listed it was removed at the
// end of the run), one more on every re-run. A member already linked to the group's file is
// left alone: the re-run writes nothing, not even its journal.
func TestRestoreRerunHardLinks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"a": {content: "shared\n"}})
	if err := os.Link(filepath.Join(dir, "src/app/a"), filepath.Join(dir, "src/app/b")); err != nil {
		t.Fatal(err)
	}
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "-q", arch, dest), exitComplete)
	for range 2 {
		r := backup(t, runOpts{dir: dir}, "restore", arch, dest)
		mustExit(t, r, exitComplete)
		if !strings.Contains(r.stderr, "2 files already there") {
			t.Errorf("stderr %q; want both files already there", r.stderr)
		}
	}
	if got := listDir(t, filepath.Join(dest, "app")); len(got) != 2 {
		t.Errorf("DEST/app holds %q, want a and b", got)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(dest, "app/a"), &st); err != nil || st.Nlink != 2 {
		t.Errorf("app/a has %d names (%v), want 2", st.Nlink, err)
	}
	if got := listDir(t, dest); len(got) != 1 {
		t.Errorf("DEST holds %q, want app only", got)
	}
}

// TestRestoreLinkGroupNotToOutside: DEST's app/a is a hard link to a file outside DEST with
// the archived content, so a plain restore keeps it as already present (with a warning that
// its metadata are not set in place). The archive's app/b belongs to a's link group: relink
// made b a third name of the outside file, so that what is later written to DEST's b
// changes the file outside. A group is linked only to a member whose names are all in the
// group; b stays a file of its own, with a warning.
func TestRestoreLinkGroupNotToOutside(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"a": {content: "shared\n"}})
	if err := os.Link(filepath.Join(dir, "src/app/a"), filepath.Join(dir, "src/app/b")); err != nil {
		t.Fatal(err)
	}
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	dest, outside := filepath.Join(dir, "dest"), filepath.Join(dir, "outside")
	makeTree(t, outside, map[string]node{"x": {content: "shared\n"}})
	os.MkdirAll(filepath.Join(dest, "app"), 0o755)
	if err := os.Link(filepath.Join(outside, "x"), filepath.Join(dest, "app/a")); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir}, "restore", arch, dest)
	mustExit(t, r, exitComplete)
	var x, b syscall.Stat_t
	if err := syscall.Stat(filepath.Join(outside, "x"), &x); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Stat(filepath.Join(dest, "app/b"), &b); err != nil {
		t.Fatal(err)
	}
	if b.Ino == x.Ino || x.Nlink != 2 {
		t.Errorf("app/b is the outside file (%d names now); want a file of its own", x.Nlink)
	}
	if !strings.Contains(r.stderr, "warning: app/b: restored as a separate file") {
		t.Errorf("stderr lacks the warning about app/b:\n%s", r.stderr)
	}
}

// TestRestoreRerunSymlinks: a re-run of a restore (after Ctrl-C, say) finds the stored
// symlinks the first run made already there, as it finds its files, and writes only what is
// missing; a symlink of another target at that name is a conflict. Once, every symlink it had
// made refused the re-run ("exists in the destination", exit 1).
func TestRestoreRerunSymlinks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"a": {content: "a\n"}})
	for name, target := range map[string]string{"l": "a", "out": "../elsewhere"} {
		if err := os.Symlink(target, filepath.Join(dir, "src/app", name)); err != nil {
			t.Fatal(err)
		}
	}
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--symlinks", "store", "-o", arch, "src/app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "-q", arch, dest), exitComplete)
	r := backup(t, runOpts{dir: dir}, "restore", arch, dest)
	mustExit(t, r, exitComplete)
	if !strings.Contains(r.stderr, "3 files already there") {
		t.Errorf("stderr %q; want the file and both symlinks already there", r.stderr)
	}
	if err := os.Remove(filepath.Join(dest, "app/l")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("elsewhere", filepath.Join(dest, "app/l")); err != nil {
		t.Fatal(err)
	}
	r = backup(t, runOpts{dir: dir}, "restore", arch, dest)
	mustExit(t, r, exitFailed)
	if !strings.Contains(r.stderr, "app/l: exists in the destination") {
		t.Errorf("stderr %q; want app/l, of another target, a conflict", r.stderr)
	}
}

// rewriteManifest copies the archive in to out, every entry as it is stored, except the
// manifest, which edit changes (as decoded JSON) and which is written last, as backup writes
// addRecordAs writes to out the archive in with its manifest's list (files, dirs) holding
// one record more: a copy of the list's first, under path, which the archive has no entry
// of.
func addRecordAs(t *testing.T, in, out, list, path string) {
	t.Helper()
	rewriteManifest(t, in, out, func(m map[string]any) {
		recs := m[list].([]any)
		rec := maps.Clone(recs[0].(map[string]any))
		rec["path"] = path
		m[list] = append(recs, rec)
	})
}

// it: a hostile archive whose manifest lies.
func rewriteManifest(t *testing.T, in, out string, edit func(m map[string]any)) {
	t.Helper()
	zr, err := zip.OpenReader(in)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zw := zip.NewWriter(f)
	var manifest *zip.File
	for _, e := range zr.File {
		if e.Name == format.ManifestName {
			manifest = e
			continue
		}
		if err := zw.Copy(e); err != nil {
			t.Fatal(err)
		}
	}
	if manifest == nil {
		t.Fatalf("%s has no manifest", in)
	}
	rc, err := manifest.Open()
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	if data, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	fh := manifest.FileHeader
	w, err := zw.CreateHeader(&zip.FileHeader{Name: fh.Name, Method: zip.Deflate, Modified: fh.Modified, ExternalAttrs: fh.ExternalAttrs, CreatorVersion: fh.CreatorVersion})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
}

// manifestFiles is the "files" list of a decoded manifest.
func manifestFiles(t *testing.T, m map[string]any) []map[string]any {
	t.Helper()
	var files []map[string]any
	for _, f := range m["files"].([]any) {
		files = append(files, f.(map[string]any))
	}
	return files
}

// linkedArchive backs up files (all of one mtime) as dir/src/app into dir/linked.zip, whose manifest then puts
// every file in one hard-link group, whatever their contents: a manifest that lies.
func linkedArchive(t *testing.T, dir string, files map[string]node) string {
	t.Helper()
	makeTree(t, filepath.Join(dir, "src/app"), files)
	// One file has one mtime: members recorded with others are not linked (see
	// TestAttackLinkGroupOfDifferentModes).
	when := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	for name := range files {
		if err := os.Chtimes(filepath.Join(dir, "src/app", name), when, when); err != nil {
			t.Fatal(err)
		}
	}
	return archiveAsLinked(t, dir)
}

// archiveAsLinked backs dir/src/app up and returns a copy of the archive whose manifest
// records all its files as one hard-link group.
func archiveAsLinked(t *testing.T, dir string) string {
	t.Helper()
	plain := filepath.Join(dir, "plain.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", plain, "src/app"), exitComplete)
	arch := filepath.Join(dir, "linked.zip")
	rewriteManifest(t, plain, arch, func(m map[string]any) {
		for _, f := range manifestFiles(t, m) {
			f["link"] = 1
		}
	})
	return arch
}

// TestAttackLinkGroupOfDifferentFiles: a manifest that puts two files of different
// content in one hard-link group ("link": 1 on both, each entry's data matching its own
// SHA-256). Restore checked each file against its SHA-256, then replaced the second by a
// hard link to the first: DEST's app/sub/b.txt held "hello\n", a.txt's content, not the
// "world\n" the archive holds for it, and the restore said complete (exit 0). Worse, a b.txt
// that DEST already held with its archived content (kept as already present, no --force)
// was replaced by the link too: the user's file was gone, with no before-state. A group
// whose members do not all have one size and SHA-256 cannot be one file: it is damage, and
// no member may be linked to another of other content.
func TestAttackLinkGroupOfDifferentFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch := linkedArchive(t, dir, map[string]node{"a.txt": {content: "hello\n"}, "sub/b.txt": {content: "world\n"}})

	// Into an empty DEST.
	dest := filepath.Join(dir, "dest")
	r := backup(t, runOpts{dir: dir}, "restore", arch, dest)
	if got := string(readFile(t, filepath.Join(dest, "app/sub/b.txt"))); got != "world\n" && r.code == exitComplete {
		t.Errorf("restore into an empty DEST: exit 0 (%q), and app/sub/b.txt holds %q, not the archived \"world\\n\"", r.stderr, got)
	}
	if !strings.Contains(r.stderr, "app/sub/b.txt: restored as a separate file, not a hard link of app/a.txt: the manifest records other content for it") {
		t.Errorf("restore into an empty DEST did not say why app/sub/b.txt is not a link: %q", r.stderr)
	}

	// Into a DEST that holds b.txt already, with its archived content: no --force.
	dest2 := filepath.Join(dir, "dest2")
	makeTree(t, dest2, map[string]node{"app/sub/b.txt": {content: "world\n"}})
	r = backup(t, runOpts{dir: dir}, "restore", arch, dest2)
	if got := string(readFile(t, filepath.Join(dest2, "app/sub/b.txt"))); got != "world\n" {
		t.Errorf("restore without --force (exit %d, %q) replaced DEST's app/sub/b.txt (\"world\\n\", as archived) by a file holding %q", r.code, r.stderr, got)
	}
	if strings.Contains(r.stderr, "before-restore") {
		t.Errorf("a restore without --force wrote a before-state: %q", r.stderr)
	}
}

// TestAttackLinkGroupOddFirst: a group of three whose first member (in restore order) is
// the one recorded with other content. The warning named the two that agree, which were
// linked, and not the odd one out: now the group is the part most members agree on.
func TestAttackLinkGroupOddFirst(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch := linkedArchive(t, dir, map[string]node{"a.txt": {content: "odd\n"}, "b.txt": {content: "same\n"}, "c.txt": {content: "same\n"}})
	dest := filepath.Join(dir, "dest")
	r := backup(t, runOpts{dir: dir}, "restore", "--jobs", "1", arch, dest)
	mustExit(t, r, exitComplete)
	want := "app/a.txt: restored as a separate file, not a hard link of app/b.txt: the manifest records other content for it"
	if !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "app/b.txt: restored as") || strings.Contains(r.stderr, "app/c.txt: restored as") {
		t.Errorf("stderr %q: want only %q", r.stderr, want)
	}
	var b, c unix.Stat_t
	if unix.Stat(filepath.Join(dest, "app/b.txt"), &b) != nil || unix.Stat(filepath.Join(dest, "app/c.txt"), &c) != nil || b.Ino != c.Ino {
		t.Error("app/b.txt and app/c.txt, recorded alike, are not one file")
	}
	if got := string(readFile(t, filepath.Join(dest, "app/a.txt"))); got != "odd\n" {
		t.Errorf("app/a.txt holds %q", got)
	}
}

// TestAttackForceOverHardLinkedPair: restore --force checks that each name it replaces
// still holds the file the plan saw (device, inode, type and ctime). Replacing the first of
// two names of one file drops that file's link count, which changes its ctime: the second
// name then failed as "was changed or replaced in the destination during the restore",
// exit 3, though nothing but the restore itself touched it. Two ways a user meets it: a
// --force restore into a DEST whose app/a.txt and app/sub/b.txt are hard links of one file
// (b.txt is never restored), and the undo of a --force restore of an archive that stores
// them as a hard-link group (docs/restore.md: "Undo is exactly backup restore --force
// BEFORE-STATE DEST: it puts back what the before-state holds"): b.txt's old content is not
// put back by the undo.
func TestAttackForceOverHardLinkedPair(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// Two separate files in the archive, two names of one file in DEST.
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"a.txt": {content: "hello\n"}, "sub/b.txt": {content: "world\n"}})
	plain := filepath.Join(dir, "plain.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", plain, "src/app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	makeTree(t, dest, map[string]node{"app/a.txt": {content: "x\n"}, "app/sub": {kind: "dir"}})
	if err := os.Link(filepath.Join(dest, "app/a.txt"), filepath.Join(dest, "app/sub/b.txt")); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir}, "restore", "--force", "--undo-dir", dir, plain, dest)
	if r.code != exitComplete || string(readFile(t, filepath.Join(dest, "app/sub/b.txt"))) != "world\n" {
		t.Errorf("restore --force over a hard-linked pair: exit %d, %q; app/sub/b.txt holds %q, want \"world\\n\"", r.code, r.stderr, string(readFile(t, filepath.Join(dest, "app/sub/b.txt"))))
	}

	// The undo of a --force restore of a hard-link group.
	makeTree(t, filepath.Join(dir, "src2/app"), map[string]node{"a.txt": {content: "same\n"}, "sub": {kind: "dir"}})
	if err := os.Link(filepath.Join(dir, "src2/app/a.txt"), filepath.Join(dir, "src2/app/sub/b.txt")); err != nil {
		t.Fatal(err)
	}
	linked := filepath.Join(dir, "linked.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", linked, "src2/app"), exitComplete)
	dest2 := filepath.Join(dir, "dest2")
	makeTree(t, dest2, map[string]node{"app/a.txt": {content: "old-a\n"}, "app/sub/b.txt": {content: "old-b\n"}})
	r = backup(t, runOpts{dir: dir}, "restore", "--force", "--json", "--undo-dir", dir, linked, dest2)
	mustExit(t, r, exitComplete)
	var out struct {
		Undo struct{ Archive string } `json:"undo"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.Undo.Archive == "" {
		t.Fatalf("restore --json: %v, no undo in %q", err, r.stdout)
	}
	r = backup(t, runOpts{dir: dir}, "restore", "--force", "--undo-dir", dir, out.Undo.Archive, dest2)
	a, b := string(readFile(t, filepath.Join(dest2, "app/a.txt"))), string(readFile(t, filepath.Join(dest2, "app/sub/b.txt")))
	if r.code != exitComplete || a != "old-a\n" || b != "old-b\n" {
		t.Errorf("the undo: exit %d, %q; DEST holds a.txt %q, b.txt %q, want \"old-a\\n\" and \"old-b\\n\"", r.code, r.stderr, a, b)
	}
}

// TestAttackLinkGroupJoinsSwappedAnchor: root restores an archive where app/a.txt and
// app/sub/hl are one file (a hard-link group; a.txt is its anchor) into a DEST whose app/
// belongs to nobody. strace holds the restore right after it linked app/a.txt into place,
// and nobody, who may rename in its own folder, puts a file of its own ("EVIL\n", same
// size) at app/a.txt. relink then takes whatever app/a.txt names now as the anchor (link()
// stats the anchor's name, never compares it with what this run placed there) and replaces
// app/sub/hl, in root's folder app/sub, by a link to nobody's file: hl holds nobody's
// bytes, belongs to nobody (who can rewrite it at will), and the restore says complete,
// exit 0, no warning. Correct behaviour: a member is linked only to the file this run
// placed (or kept) at the anchor's name (p.placed[anchor]); when the anchor's name holds
// another file, the member stays the separate copy the restore wrote, with a warning (or
// the entry fails, exit 3), and hl keeps the archived bytes.
func TestAttackLinkGroupJoinsSwappedAnchor(t *testing.T) {
	t.Parallel()
	linkSwap(t, false)
}

// TestAttackLinkGroupJoinsSwappedAnchorTemp is the same attack one step earlier, on a --force
// restore over nobody's app/a.txt (a new file has no temp name: it is written unnamed):
// strace holds the restore as it enters the renameat2 that puts app/a.txt's temp file
// (.a.txt.restore-TOKEN-1, in nobody's folder) in place, and nobody puts its own file at the
// temp name. renameNew renames by name without checking that the temp name still holds
// the file this run wrote (and checked against its SHA-256), records nobody's file as the
// one it placed, reports app/a.txt restored, and relink links app/sub/hl, in root's folder,
// to it. A fix that only compares the anchor with what the run placed misses this one:
// the temp name must be checked to hold the written file (fstat of the descriptor against
// an fstatat of the name) before the rename, and the name after it.
func TestAttackLinkGroupJoinsSwappedAnchorTemp(t *testing.T) {
	t.Parallel()
	linkSwap(t, true)
}

// linkSwap runs the attack of TestAttackLinkGroupJoinsSwappedAnchor: nobody swaps
// app/a.txt for its own file right after the link (or, with temp, the temp file of a
// --force restore right before its rename).
func linkSwap(t *testing.T, temp bool) {
	mustRoot(t)
	mustTool(t, "strace")
	dir := sharedTempDir(t)
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"a.txt": {content: "good\n"}, "sub/x": {content: "x\n"}})
	if err := os.Link(filepath.Join(dir, "src/app/a.txt"), filepath.Join(dir, "src/app/sub/hl")); err != nil {
		t.Fatal(err)
	}
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	os.MkdirAll(filepath.Join(dest, "app"), 0o755)
	os.Chown(filepath.Join(dest, "app"), nobody, nobody)
	log := filepath.Join(dir, "strace.log")
	call, args := "linkat", []string{"--jobs", "1", arch, dest}
	inject := "inject=linkat:delay_exit=1500000:when=1"
	if temp {
		makeTree(t, filepath.Join(dest, "app"), map[string]node{"a.txt": {content: "old\n"}})
		os.Chown(filepath.Join(dest, "app/a.txt"), nobody, nobody)
		call, args = "renameat2", append([]string{"--force", "--no-undo"}, args...)
		inject = "inject=renameat2:delay_enter=1500000:when=1"
	}
	cmd := exec.Command("strace", append([]string{"-f", "-o", log, "-e", "trace=" + call, "-e", inject,
		binary, "restore"}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	name := "a.txt"
	// The rename held on entry (temp), the link held after it is made.
	waitForCall(t, log, func(c string) bool {
		if i := strings.Index(c, `".a.txt.restore-`); temp && i >= 0 {
			name = strings.SplitN(c[i+1:], `"`, 2)[0]
		}
		return strings.Contains(c, call+`(`) && strings.Contains(c, `"a.txt"`) && returned(c) != temp
	})
	swap := exec.Command("sh", "-c", `cd "$1" && mv "$2" .old && printf 'EVIL\n' > "$2"`, "swap", filepath.Join(dest, "app"), name)
	swap.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	if out, err := swap.CombinedOutput(); err != nil {
		t.Fatalf("swap as nobody: %v %s", err, out)
	}
	cmd.Wait()
	hl := filepath.Join(dest, "app/sub/hl")
	b, _ := os.ReadFile(hl)
	var st syscall.Stat_t
	syscall.Lstat(hl, &st)
	if string(b) != "good\n" || st.Uid == nobody {
		t.Errorf("app/sub/hl (in root's app/sub) holds %q, owner uid %d, links %d: nobody's file; restore exit %d:\n%s",
			b, st.Uid, st.Nlink, cmd.ProcessState.ExitCode(), stderr.String())
	}
}

// TestAttackLinkAnchorInodeReused: the fix links a hard-link group's members "only to the
// file this run placed" at the anchor's name, comparing device and inode number alone
// (placed.file, statID). On ext4 a freed inode number is handed straight back to the next
// file made. The archive holds app/pub/a and app/sec/b as one hard-link group (root's);
// DEST's app/pub belongs to nobody, app/sec is root's (0755). nobody waits for the restore
// to place app/pub/a, removes it and writes a file of its own there ("EVIL"), which gets
// the same inode number; strace only holds the restore 0.7 s after placing app/sec/b so
// that the swap lands before the relink. The relink then finds "the file this run placed"
// at app/pub/a, links it into root's app/sec as b, and the restore says complete, exit 0,
// no warning: a file nobody owns and may rewrite now sits in a folder only root may write
// (app/sec could be /etc/cron.d). Correct: the anchor is identified by more than its inode
// number (ctime and the birth time, or better a descriptor held open from the write to the
// link, linkat of /proc/self/fd or AT_EMPTY_PATH), so b stays the separate root's file
// this run wrote, with a warning.
func TestAttackLinkAnchorInodeReused(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "strace")
	dir := sharedTempDir(t)
	arch := pubSecArchive(t, dir)
	dest := filepath.Join(dir, "dest")
	pubSecDest(dest)
	attacker := exec.Command("bash", "-c", `cd "$1" || exit 1; for n in $(seq 10000); do [ -e a ] && break; sleep 0.001; done; rm -f a; echo EVIL > a`,
		"attacker", filepath.Join(dest, "app/pub"))
	attacker.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	if err := attacker.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	cmd := exec.Command("strace", "-f", "-o", "/dev/null", "-e", "trace=linkat", "-e", "inject=linkat:delay_exit=700000:when=2",
		binary, "restore", "--jobs", "1", arch, dest)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.Run()
	attacker.Wait()
	b := filepath.Join(dest, "app/sec/b")
	var st syscall.Stat_t
	if err := syscall.Lstat(b, &st); err != nil {
		t.Fatal(err)
	}
	content, _ := os.ReadFile(b)
	if st.Uid == nobody || string(content) != "good\n" {
		t.Errorf("root's app/sec/b is %d:%d with %q (%d names); restore exit %d:\n%s", st.Uid, st.Gid, content, st.Nlink, cmd.ProcessState.ExitCode(), stderr.String())
	}
}

// pubSecArchive writes dir/t.zip, a backup of src/app holding app/pub/a and app/sec/b as
// one file (a hard-link group, app/pub/a its anchor).
func pubSecArchive(t *testing.T, dir string) string {
	t.Helper()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"pub/a": {content: "good\n"}})
	os.MkdirAll(filepath.Join(dir, "src/app/sec"), 0o755)
	if err := os.Link(filepath.Join(dir, "src/app/pub/a"), filepath.Join(dir, "src/app/sec/b")); err != nil {
		t.Fatal(err)
	}
	arch := filepath.Join(dir, "t.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	return arch
}

// pubSecDest makes the DEST of the pubSecArchive attacks: app/pub is nobody's, app/sec root's.
func pubSecDest(dest string) {
	os.MkdirAll(filepath.Join(dest, "app/pub"), 0o755)
	os.MkdirAll(filepath.Join(dest, "app/sec"), 0o755)
	os.Chmod(dest, 0o755)
	os.Chmod(filepath.Join(dest, "app"), 0o755)
	os.Chown(filepath.Join(dest, "app/pub"), nobody, nobody)
}
