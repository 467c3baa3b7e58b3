package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backup/format"
)

// TestAttack5DecDoubleEscapedLatestName: a set's archive name holds a backslash (its SOURCE
// was named w\z) and its receipt's status holds an ESC. The LATEST error wraps the name
// already quoted by QuoteName, and sayf then escapes the whole error again: the name is
// printed w\\z (a \" for a quote) on that line, where every other line prints it w\z.
func TestAttack5DecDoubleEscapedLatestName(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, `w\z`)
	set := filepath.Join(dir, "set")
	makeTree(t, dir, map[string]node{`w\z/f`: {content: "x"}, "set": {kind: "dir"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, src), 0)
	name := readLatest(t, set)
	receipt := filepath.Join(set, name+format.ReceiptSuffix)
	data := string(readFile(t, receipt))
	if !strings.Contains(data, `"status": "complete"`) {
		t.Fatalf("receipt has no complete status:\n%s", data)
	}
	data = strings.Replace(data, `"status": "complete"`, `"status": "fail\u001bed"`, 1)
	if err := os.WriteFile(receipt, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir}, "verify", set)
	if r.code == 0 {
		t.Fatalf("verify of a set whose LATEST receipt says failed exited 0:\n%s", r.stderr)
	}
	if strings.Contains(r.stderr, "\x1b") {
		t.Fatalf("raw ESC on stderr: %q", r.stderr)
	}
	if want := "names " + format.QuoteName(name) + ":"; !strings.Contains(r.stderr, want) {
		t.Fatalf("stderr names LATEST's target otherwise than as %q (escaped twice):\n%s", want, r.stderr)
	}
}

// TestAttack5DecDotDotAfterFileRestoresIntoParent: restore's DEST file/.., where file is a
// regular file, is no folder for the kernel (ls: Not a directory), as file/x is not (that
// DEST fails). kernelPath takes it through filepath.EvalSymlinks, which pops the .. after
// a file lexically: the archive is restored into the folder that holds file, which the user
// never named.
func TestAttack5DecDotDotAfterFileRestoresIntoParent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"src/f": {content: "x"}, "w/file": {content: "mine"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "a.zip", "src"), 0)
	w := filepath.Join(dir, "w")
	if _, err := os.Stat(w + "/file/.."); err == nil {
		t.Fatal("the kernel finds file/..")
	}
	r := backup(t, runOpts{dir: w}, "restore", "../a.zip", "file/..")
	if _, err := os.Lstat(filepath.Join(w, "src")); err == nil {
		t.Fatalf("restore into file/.. (not a folder: ENOTDIR) wrote into file's folder (exit %d):\n%s", r.code, r.stderr)
	}
	if r.code == 0 {
		t.Fatalf("restore into file/.. exited 0:\n%s", r.stderr)
	}
}

// TestAttack5DecDotDotAfterSymlinkLoopRestoresIntoParent: restore's DEST loop/.., where loop
// is a symlink to itself, is no folder for the kernel (ELOOP). resolvePath follows loop 40
// times, then joins the rest with filepath.Join, which cleans loop/.. away: the archive is
// restored into the folder that holds loop.
func TestAttack5DecDotDotAfterSymlinkLoopRestoresIntoParent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"src/f": {content: "x"}, "w/loop": {kind: "symlink", content: "loop"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "a.zip", "src"), 0)
	w := filepath.Join(dir, "w")
	if _, err := os.Stat(w + "/loop/.."); err == nil {
		t.Fatal("the kernel finds loop/..")
	}
	r := backup(t, runOpts{dir: w}, "restore", "../a.zip", "loop/..")
	if _, err := os.Lstat(filepath.Join(w, "src")); err == nil {
		t.Fatalf("restore into loop/.. (ELOOP for the kernel) wrote into loop's folder (exit %d):\n%s", r.code, r.stderr)
	}
	if r.code == 0 {
		t.Fatalf("restore into loop/.. exited 0:\n%s", r.stderr)
	}
}

// TestAttack5DecStdoutReceiptFolderCheckedLexically: with -o -, a --receipt whose folder is
// not there is refused with exit 2 before the archive streams (docs/create.md). --receipt
// dl/../r.json, dl a symlink to missing/sub, has no folder for the kernel (dl/.. does not
// resolve), and the receipt is written where kernelPath puts it, missing/r.json; but the
// check stats filepath.Dir of the path as given, ".", which is there: the whole archive
// streams, and only then the receipt fails, exit 1.
func TestAttack5DecStdoutReceiptFolderCheckedLexically(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"src/f": {content: "x"}, "dl": {kind: "symlink", content: "missing/sub"}})
	r := backup(t, runOpts{dir: dir}, "create", "-o", "-", "--receipt", "dl/../r.json", "src")
	if r.code != 2 || r.stdout != "" {
		t.Fatalf("--receipt dl/../r.json, whose folder is not there: exit %d, %d bytes streamed to stdout; want exit 2 before the archive streams:\n%s", r.code, len(r.stdout), r.stderr)
	}
}

// TestAttack5DecListSkippedKindRaw: list prints the manifest's skipped paths on stderr, each
// with its kind, by fmt.Sprintf and Fprintln, not sayf: a hostile archive whose manifest gives
// a skipped entry the kind "fifo\x1b[2J" drives the terminal with a raw ESC, where the
// warnings' op and error on the next lines are escaped.
func TestAttack5DecListSkippedKindRaw(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"src/f": {content: "x"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "a.zip", "src"), 0)
	in, err := zip.OpenReader(filepath.Join(dir, "a.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var buf bytes.Buffer
	out := zip.NewWriter(&buf)
	for _, f := range in.File {
		if f.Name != format.ManifestName {
			if err := out.Copy(f); err != nil {
				t.Fatal(err)
			}
			continue
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.NewDecoder(rc).Decode(&m); err != nil {
			t.Fatal(err)
		}
		rc.Close()
		m["status"] = "incomplete"
		m["skipped"] = []any{map[string]any{"path": "p", "kind": "fifo\x1b[2J"}}
		data, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		w, err := out.CreateHeader(&zip.FileHeader{Name: f.Name, Method: zip.Deflate, Modified: f.Modified})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "evil.zip"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir}, "list", "evil.zip")
	if !strings.Contains(r.stderr, "skipped p") {
		t.Fatalf("list did not print the skipped entry (exit %d):\n%q", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "\x1b") {
		t.Fatalf("list printed the manifest's skipped kind raw, ESC and all:\n%q", r.stderr)
	}
}

// TestAttack5DecPruneAtticPathRaw: prune --attic ends with "moved to DIR N, kept M", where DIR
// is the attic's path as it is: a folder named with an ESC drives the terminal, where every
// other path a person reads is quoted (docs/operations.md: "wherever a person reads it").
func TestAttack5DecPruneAtticPathRaw(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	attic := "at\x1b[2Jtic"
	makeTree(t, dir, map[string]node{"src/f": {content: "x"}, "set": {kind: "dir"}, attic: {kind: "dir"}})
	for i := 0; i < 2; i++ {
		mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "set", "src"), 0)
	}
	r := backup(t, runOpts{dir: dir}, "prune", "--keep-last", "1", "--attic", attic, "set")
	mustExit(t, r, 0)
	if !strings.Contains(r.stdout, "moved to") {
		t.Fatalf("prune --attic said nothing of the move:\n%s", r.stdout)
	}
	if strings.Contains(r.stdout+r.stderr, "\x1b") {
		t.Fatalf("prune --attic printed the attic's path raw, ESC and all:\n%q", r.stdout)
	}
}
