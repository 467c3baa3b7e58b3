package main

import (
	"archive/zip"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"backup/format"
)

// The adversarial pass of December 2nd (attack2dec): each test is a defect found by trying
// to break backup, failing until it is fixed.

// rewriteManifest copies the archive in to out, every entry as it is stored, except the
// manifest, which edit changes (as decoded JSON) and which is written last, as backup writes
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

// linkedArchive backs up files as dir/src/app into dir/linked.zip, whose manifest then puts
// every file in one hard-link group, whatever their contents: a manifest that lies.
func linkedArchive(t *testing.T, dir string, files map[string]node) string {
	t.Helper()
	makeTree(t, filepath.Join(dir, "src/app"), files)
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

func readFileString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAttack2DecLinkGroupOfDifferentFiles: a manifest that puts two files of different
// content in one hard-link group ("link": 1 on both, each entry's data matching its own
// SHA-256). Restore checked each file against its SHA-256, then replaced the second by a
// hard link to the first: DEST's app/sub/b.txt held "hello\n", a.txt's content, not the
// "world\n" the archive holds for it, and the restore said complete (exit 0). Worse, a b.txt
// that DEST already held with its archived content (kept as already present, no --force)
// was replaced by the link too: the user's file was gone, with no before-state. A group
// whose members do not all have one size and SHA-256 cannot be one file: it is damage, and
// no member may be linked to another of other content.
func TestAttack2DecLinkGroupOfDifferentFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch := linkedArchive(t, dir, map[string]node{"a.txt": {content: "hello\n"}, "sub/b.txt": {content: "world\n"}})

	// Into an empty DEST.
	dest := filepath.Join(dir, "dest")
	r := backup(t, runOpts{dir: dir}, "restore", arch, dest)
	if got := readFileString(t, filepath.Join(dest, "app/sub/b.txt")); got != "world\n" && r.code == exitComplete {
		t.Errorf("restore into an empty DEST: exit 0 (%q), and app/sub/b.txt holds %q, not the archived \"world\\n\"", r.stderr, got)
	}
	if !strings.Contains(r.stderr, "app/sub/b.txt: restored as a separate file, not a hard link of app/a.txt: the manifest records other content for it") {
		t.Errorf("restore into an empty DEST did not say why app/sub/b.txt is not a link: %q", r.stderr)
	}

	// Into a DEST that holds b.txt already, with its archived content: no --force.
	dest2 := filepath.Join(dir, "dest2")
	makeTree(t, dest2, map[string]node{"app/sub/b.txt": {content: "world\n"}})
	r = backup(t, runOpts{dir: dir}, "restore", arch, dest2)
	if got := readFileString(t, filepath.Join(dest2, "app/sub/b.txt")); got != "world\n" {
		t.Errorf("restore without --force (exit %d, %q) replaced DEST's app/sub/b.txt (\"world\\n\", as archived) by a file holding %q", r.code, r.stderr, got)
	}
	if strings.Contains(r.stderr, "before-restore") {
		t.Errorf("a restore without --force wrote a before-state: %q", r.stderr)
	}
}

// TestAttack2DecJSONNamesNotUTF8: two files whose names differ only in bytes that are not
// UTF-8 ("bad\xff", "bad\xfe"). docs/formats.md: "Every JSON record is UTF-8; a name that is
// not has a _b64 twin", and docs/operations.md: "--json, --json-lines, receipts and
// manifests give every name as it is". The receipt and manifest do (path_b64), but list
// --json printed both entries as "app/bad\ufffd", with no name_b64, and restore --json
// listed the conflict the same way: a program reading the JSON cannot tell the two files
// apart or name either of them (to --include it, or to remove the conflict).
func TestAttack2DecJSONNamesNotUTF8(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"bad\xff": {content: "1"}, "bad\xfe": {content: "2"}})
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)

	r := backup(t, runOpts{dir: dir}, "list", "--json", arch)
	mustExit(t, r, exitComplete)
	var list struct {
		Entries []map[string]any `json:"entries"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range list.Entries {
		key := ""
		for k, v := range e {
			if k == "name" || strings.HasSuffix(k, "_b64") {
				key += k + "=" + v.(string) + ";"
			}
		}
		if seen[key] {
			t.Errorf("list --json gives two entries as %q: the names bad\\xff and bad\\xfe are lost", key)
		}
		seen[key] = true
	}

	dest := filepath.Join(dir, "dest")
	makeTree(t, dest, map[string]node{"app/bad\xff": {content: "other"}})
	r = backup(t, runOpts{dir: dir}, "restore", "--json", arch, dest)
	mustExit(t, r, exitFailed)
	if !strings.Contains(r.stdout, "_b64") && !strings.Contains(r.stdout, `\xff`) {
		t.Errorf("restore --json names the conflict app/bad\\xff only as %q: its name is lost", r.stdout)
	}
}

// TestAttack2DecSetNamesRawOnTerminal: a SOURCE whose base name holds an escape sequence
// (an OSC that sets the terminal's title) or a carriage return names a backup set's
// archives (only a newline, "..", "/" and NUL are refused there). docs/operations.md: "A name
// (or path) that holds a byte that is not printable ... is printed quoted as Go's %q does,
// wherever a person reads it ... so no name can forge a line or drive the terminal". create's
// summary line quotes the archive's path, but the set's own lines printed the archive name
// raw: create's "LATEST -> …", verify's "matches ….receipt.json", status's table and verdict,
// prune's decisions. A "\r" there overwrites the verdict a person reads ("x\rFORGED…").
func TestAttack2DecSetNamesRawOnTerminal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	name := "a\x1b]0;pwned\x07\rb"
	makeTree(t, filepath.Join(dir, "src", name), map[string]node{"f": {content: "1"}})
	set := filepath.Join(dir, "set")
	runs := [][]string{
		{"create", "--output-dir", set, filepath.Join("src", name)},
		{"verify", set},
		{"status", set},
		{"prune", "--keep-last", "1", set},
	}
	for _, args := range runs {
		r := backup(t, runOpts{dir: dir}, args...)
		mustExit(t, r, exitComplete)
		for _, out := range []string{r.stdout, r.stderr} {
			for _, line := range strings.Split(out, "\n") {
				if strings.ContainsAny(line, "\x1b\x07\r") {
					t.Errorf("backup %s printed the set's archive name raw: %q", args[0], line)
				}
			}
		}
	}
}

// TestAttack2DecVersionExitCodes: `backup version --json` whose stdout is a pipe nobody
// reads exited 1, an exit code version's help and the README did not list, while plain
// `backup version` into the same pipe exited 0 though it printed nothing. Both now exit 1,
// as completion does when its script cannot be written, and say why; the help and the
// README list it.
func TestAttack2DecVersionExitCodes(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"version"}, {"version", "--json"}} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		r.Close() // the reader is gone before anything is written
		cmd := exec.Command(binary, args...)
		cmd.Stdout = w
		var stderr strings.Builder
		cmd.Stderr = &stderr
		cmd.Run()
		w.Close()
		if code := cmd.ProcessState.ExitCode(); code != exitFailed || !strings.Contains(stderr.String(), "stdout") {
			t.Errorf("backup %s into a closed pipe: exit %d (%q), want %d and a line saying stdout could not be written", strings.Join(args, " "), code, stderr.String(), exitFailed)
		}
	}
	help := backup(t, runOpts{}, "version", "--help")
	if !strings.Contains(help.stdout, "1 it could not be written") {
		t.Errorf("version's help does not list exit 1:\n%s", help.stdout)
	}
}

// TestAttack2DecUndoDestDotDotAfterSymlink: DEST given as "D/s/t/lnk/..", lnk a symlink to
// D/q: the kernel resolves DEST to D, and the restore writes into D (it replaced D/app/a.txt).
// The before-state was read from the name cleaned lexically, D/s/t: it saved D/s/t/app/a.txt
// (another file) instead of the D/app/a.txt it replaced, so the user's file was gone and
// the printed undo put back the other file's bytes. It was also written into D/s, inside
// the DEST the restore wrote into ("never inside DEST"). Without D/s/t/app the restore
// failed instead ("before-state: source D/s/t/app: no such file or directory").
func TestAttack2DecUndoDestDotDotAfterSymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"a.txt": {content: "hello\n"}})
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)

	d := filepath.Join(dir, "D")
	makeTree(t, d, map[string]node{
		"app/a.txt":     {content: "the user's file\n"},
		"q":             {kind: "dir"},
		"s/t/app/a.txt": {content: "another file\n"},
	})
	if err := os.Symlink(filepath.Join(d, "q"), filepath.Join(d, "s/t/lnk")); err != nil {
		t.Fatal(err)
	}
	dest := "D/s/t/lnk/.."
	r := backup(t, runOpts{dir: dir}, "restore", "--force", "--json", arch, dest)
	mustExit(t, r, exitComplete)
	if got := readFileString(t, filepath.Join(d, "app/a.txt")); got != "hello\n" {
		t.Fatalf("restore --force into %s did not write D/app/a.txt (%q): the test's premise is gone", dest, got)
	}
	var out struct {
		Undo struct{ Archive string } `json:"undo"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.Undo.Archive == "" {
		t.Fatalf("restore --json: %v, no undo in %q", err, r.stdout)
	}
	if rel, err := filepath.Rel(d, out.Undo.Archive); err == nil && !strings.HasPrefix(rel, "..") {
		t.Errorf("the before-state %s was written inside DEST %s (which is %s)", out.Undo.Archive, dest, d)
	}
	saved := readZip(t, out.Undo.Archive)
	if got := saved["app/a.txt"]; got != "the user's file\n" {
		t.Errorf("the before-state holds app/a.txt as %q, not the %q the restore replaced", got, "the user's file\n")
	}
	r = backup(t, runOpts{dir: dir}, "restore", "--force", out.Undo.Archive, dest)
	if got := readFileString(t, filepath.Join(d, "app/a.txt")); got != "the user's file\n" {
		t.Errorf("the undo (exit %d) left D/app/a.txt holding %q: the user's file is lost", r.code, got)
	}
}

// TestAttack2DecMetricsLabelNotUTF8: a set in a folder whose name is not UTF-8
// ("b\xffad"): --metrics-file wrote the folder's bytes raw into the set label. The
// Prometheus text format is UTF-8 ("invalid label value" from promtool check metrics, and
// node_exporter's textfile collector drops the whole file), so the set's metrics, the last
// success its age alert watches included, were never collected: the alert on a stale
// backup cannot fire for a series that does not exist. docs/operations.md promises the
// "text format for node_exporter's textfile collector".
func TestAttack2DecMetricsLabelNotUTF8(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"f": {content: "1"}})
	set := filepath.Join(dir, "b\xffad")
	for _, args := range [][]string{
		{"create", "-q", "--output-dir", set, "--metrics-file", filepath.Join(dir, "create.prom"), "src/app"},
		{"status", "--metrics-file", filepath.Join(dir, "status.prom"), set},
	} {
		mustExit(t, backup(t, runOpts{dir: dir}, args...), exitComplete)
		prom := args[slices.Index(args, "--metrics-file")+1]
		data, err := os.ReadFile(prom)
		if err != nil {
			t.Fatal(err)
		}
		if !utf8.Valid(data) {
			t.Errorf("backup %s --metrics-file wrote a file that is not UTF-8, which the Prometheus text format must be: %q", args[0], strings.SplitN(string(data), "\n", 4)[2])
		}
		if _, err := exec.LookPath("promtool"); err == nil {
			if out, err := exec.Command("sh", "-c", "promtool check metrics < "+prom).CombinedOutput(); err != nil {
				t.Errorf("promtool check metrics on backup %s's file: %v: %s", args[0], err, out)
			}
		}
	}
}

// TestAttack2DecSetSourceNotUTF8: a set's SOURCE whose base name is not UTF-8 ("b\xffad").
// It is not refused as a name that cannot name a set's archives (docs/sets.md: such a
// SOURCE is refused with exit 2, nothing written), yet no run of it can ever be activated:
// the receipt records archive.path in a plain JSON string, "b\ufffdad-….zip", which the
// activation then compares with the archive's real name and refuses ("LATEST not moved: not
// activating b\xffad-….zip: its receipt describes another archive"). Every run wrote an
// archive and a receipt saying complete and exited 1; LATEST never appeared, and status
// and prune refused the set ("LATEST: is missing, but the set holds 1 run").
func TestAttack2DecSetSourceNotUTF8(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/b\xffad"), map[string]node{"f": {content: "1"}})
	set := filepath.Join(dir, "set")
	r := backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "src/b\xffad")
	switch r.code {
	case exitComplete:
		if _, err := os.Stat(filepath.Join(set, "LATEST")); err != nil {
			t.Errorf("exit 0 but no LATEST: %v", err)
		}
		if r := backup(t, runOpts{dir: dir}, "status", set); r.code != exitComplete {
			t.Errorf("status of the set after a complete run: exit %d, %q", r.code, r.stderr)
		}
	case exitUsage:
		if got := listTree(t, dir); slices.ContainsFunc(got, func(p string) bool { return strings.HasPrefix(p, "set/") && p != "set/" }) {
			t.Errorf("refused with exit 2, but the set holds %q", got)
		}
	default:
		t.Errorf("create into a set from SOURCE b\\xffad: exit %d (%q), the set holds %q; want the run activated (exit 0), or the SOURCE refused before anything is written (exit 2)", r.code, r.stderr, listDir(t, set))
	}
}

// TestAttack2DecForceOverHardLinkedPair: restore --force checks that each name it replaces
// still holds the file the plan saw (device, inode, type and ctime). Replacing the first of
// two names of one file drops that file's link count, which changes its ctime: the second
// name then failed as "was changed or replaced in the destination during the restore",
// exit 3, though nothing but the restore itself touched it. Two ways a user meets it: a
// --force restore into a DEST whose app/a.txt and app/sub/b.txt are hard links of one file
// (b.txt is never restored), and the undo of a --force restore of an archive that stores
// them as a hard-link group (docs/restore.md: "Undo is exactly backup restore --force
// BEFORE-STATE DEST: it puts back what the before-state holds"): b.txt's old content is not
// put back by the undo.
func TestAttack2DecForceOverHardLinkedPair(t *testing.T) {
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
	if r.code != exitComplete || readFileString(t, filepath.Join(dest, "app/sub/b.txt")) != "world\n" {
		t.Errorf("restore --force over a hard-linked pair: exit %d, %q; app/sub/b.txt holds %q, want \"world\\n\"", r.code, r.stderr, readFileString(t, filepath.Join(dest, "app/sub/b.txt")))
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
	a, b := readFileString(t, filepath.Join(dest2, "app/a.txt")), readFileString(t, filepath.Join(dest2, "app/sub/b.txt"))
	if r.code != exitComplete || a != "old-a\n" || b != "old-b\n" {
		t.Errorf("the undo: exit %d, %q; DEST holds a.txt %q, b.txt %q, want \"old-a\\n\" and \"old-b\\n\"", r.code, r.stderr, a, b)
	}
}

// TestAttack2DecOutputDirDotDotInsideSource: --output-dir SRC/sub/lnk/.., lnk a symlink to a
// folder outside SRC. The check of outputs against SOURCEs took the path as the kernel does
// (outside SRC), but the set was written where filepath.Abs put it, SRC/sub, inside the
// SOURCE: the next run archived the set's own LATEST, archive and receipt.
func TestAttack2DecOutputDirDotDotInsideSource(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src"), map[string]node{"a.txt": {content: "hi\n"}, "sub/keep": {content: "k\n"}})
	out := filepath.Join(dir, "out")
	if err := os.MkdirAll(filepath.Join(out, "q"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(out, "q"), filepath.Join(dir, "src/sub/lnk")); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "src/sub/lnk/..", "src"), exitComplete)
	}
	if _, err := os.Stat(filepath.Join(out, "LATEST")); err != nil {
		t.Errorf("the set is not where the kernel reaches src/sub/lnk/.. (%s): %v", out, err)
	}
	latest := readLatest(t, out)
	for name := range readZip(t, filepath.Join(out, latest)) {
		if strings.HasPrefix(name, "src/sub/") && name != "src/sub/" && name != "src/sub/keep" {
			t.Errorf("the second run archived %s, a file of its own set", name)
		}
	}
}

// TestAttack2DecLinkGroupOddFirst: a group of three whose first member (in restore order) is
// the one recorded with other content. The warning named the two that agree, which were
// linked, and not the odd one out: now the group is the part most members agree on.
func TestAttack2DecLinkGroupOddFirst(t *testing.T) {
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
	if got := readFileString(t, filepath.Join(dest, "app/a.txt")); got != "odd\n" {
		t.Errorf("app/a.txt holds %q", got)
	}
}
