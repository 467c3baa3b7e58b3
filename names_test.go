package main

import (
	"archive/zip"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"backup/backupset"
)

// oddNames are names Linux allows that other systems read differently: a backslash, a drive
// letter, bytes that are not UTF-8. Each is a file (with its name as content) below app/.
var oddNames = []string{`a\b`, `c:d`, "bad\xffn", `dir\x/in\side`, "lat\xe9n1/f", "naïve"}

func oddTree(t *testing.T, root string) {
	t.Helper()
	nodes := map[string]node{}
	for _, n := range oddNames {
		nodes[n] = node{content: n}
	}
	makeTree(t, root, nodes)
}

// TestCreateOddNames backs up names Linux allows and other systems read differently: the
// run is complete, the archive holds each name byte for byte (unzip -t passes), verify
// passes, and restore gives back each name byte for byte.
func TestCreateOddNames(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	oddTree(t, filepath.Join(dir, "app"))
	out := filepath.Join(dir, "b.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-o", out, "app"), exitComplete)
	if rc := readReceipt(t, out+".receipt.json"); rc.Status != "complete" || rc.Counts.Files != len(oddNames) {
		t.Errorf("receipt: status %s, %d files; want complete, %d", rc.Status, rc.Counts.Files, len(oddNames))
	}
	entries := readZip(t, out)
	for _, n := range oddNames {
		if got, ok := entries["app/"+n]; !ok || got != n {
			t.Errorf("entry %q: %q (present %v), want its name as content", "app/"+n, got, ok)
		}
	}
	if r := backup(t, runOpts{dir: dir}, "verify", out); r.code != exitComplete {
		t.Errorf("verify: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	dest := filepath.Join(dir, "dest")
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", out, dest), exitComplete)
	for _, n := range oddNames {
		data, err := os.ReadFile(filepath.Join(dest, "app", n))
		if err != nil || string(data) != n {
			t.Errorf("restored %q: %q, %v; want its name as content", n, data, err)
		}
	}
}

// TestSetOddNames runs a backup set twice over a tree with those names: every run verifies
// and LATEST moves to the newest backup each time.
func TestSetOddNames(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	oddTree(t, filepath.Join(dir, "app"))
	set := filepath.Join(dir, "set")
	var before []string
	for run := 1; run <= 2; run++ {
		mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app"), exitComplete)
		var zips, added []string
		for _, n := range setArchives(t, set) {
			if strings.HasSuffix(n, ".zip") {
				zips = append(zips, n)
				if !slices.Contains(before, n) {
					added = append(added, n)
				}
			}
		}
		if len(added) != 1 || readLatest(t, set) != added[0] {
			t.Fatalf("run %d: archives %q, LATEST %q; want LATEST on the one just made", run, zips, readLatest(t, set))
		}
		before = zips
	}
}

// TestReceiptRawNames checks that the receipt and the manifest carry a name that is not
// UTF-8 without loss: the display path beside path_b64, the name's bytes.
func TestReceiptRawNames(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := "fifo\xff"
	makeTree(t, filepath.Join(dir, "app"), map[string]node{fifo: {kind: "fifo"}, "f\xfe": {content: "x"}})
	out := filepath.Join(dir, "b.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-o", out, "app"), exitComplete)
	var receipt struct {
		Skipped []map[string]string `json:"skipped"`
	}
	data, err := os.ReadFile(out + ".receipt.json")
	if err == nil {
		err = json.Unmarshal(data, &receipt)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(receipt.Skipped) != 1 || rawPath(t, receipt.Skipped[0]) != "app/"+fifo {
		t.Errorf("receipt skipped %q, want app/%q", receipt.Skipped, fifo)
	}
	var manifest struct {
		Files   []map[string]any    `json:"files"`
		Skipped []map[string]string `json:"skipped"`
	}
	if err := json.Unmarshal([]byte(readZip(t, out)[".backup-manifest.json"]), &manifest); err != nil {
		t.Fatal(err)
	}
	if len(manifest.Files) != 1 || len(manifest.Skipped) != 1 || rawPath(t, manifest.Skipped[0]) != "app/"+fifo {
		t.Fatalf("manifest files %v skipped %q", manifest.Files, manifest.Skipped)
	}
	file := map[string]string{"path": manifest.Files[0]["path"].(string)}
	if b64, ok := manifest.Files[0]["path_b64"].(string); ok {
		file["path_b64"] = b64
	}
	if got := rawPath(t, file); got != "app/f\xfe" {
		t.Errorf("manifest file %q, want %q", got, "app/f\xfe")
	}
}

// rawPath reads a path from a JSON record: path_b64 when present (the display path must then
// be the name with U+FFFD for the bytes that are not UTF-8), else path.
func rawPath(t *testing.T, rec map[string]string) string {
	t.Helper()
	b64, ok := rec["path_b64"]
	if !ok {
		return rec["path"]
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatalf("path_b64 %q: %v", b64, err)
	}
	if want := strings.ToValidUTF8(string(raw), "\uFFFD"); rec["path"] != want {
		t.Errorf("display path %q, want %q", rec["path"], want)
	}
	return string(raw)
}

// TestSourceNamedManifest: a SOURCE stored under the manifest's name would make two entries
// of one name, so it is a usage error before anything is written; the same name below a
// SOURCE is an ordinary file.
func TestSourceNamedManifest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{
		".backup-manifest.json": {content: "mine"}, "d/.backup-manifest.json": {kind: "dir"},
		"app/.backup-manifest.json": {content: "also mine"},
	})
	for _, src := range []string{".backup-manifest.json", "d/.backup-manifest.json"} {
		r := backup(t, runOpts{dir: dir}, "create", "-o", "b.zip", "app", src)
		first, _, _ := strings.Cut(r.stderr, "\n")
		if r.code != exitUsage || !strings.Contains(first, "source "+src+" would be stored as .backup-manifest.json") {
			t.Errorf("SOURCE %s: exit %d, stderr %q; want %d, a usage error naming the manifest", src, r.code, r.stderr, exitUsage)
		}
		if _, err := os.Stat(filepath.Join(dir, "b.zip")); err == nil {
			t.Errorf("SOURCE %s: an archive was written", src)
		}
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-o", "b.zip", "app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "b.zip", dest), exitComplete)
	if got := listTree(t, dest); !slices.Equal(got, []string{"app/", "app/.backup-manifest.json"}) {
		t.Errorf("restored %q", got)
	}
}

// mustHave skips a test that needs a tool, except in CI, where the tool is installed and a
// skip would hide a test that never ran.
func mustHave(t *testing.T, tool string) {
	t.Helper()
	if _, err := exec.LookPath(tool); err == nil {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("this test needs %s, which CI installs", tool)
	}
	t.Skipf("needs %s", tool)
}

// TestAppendedEntry appends an entry to a backup with Info-ZIP zip, so that the manifest is
// no longer the last entry: verify finds the manifest anyway and calls the entry damage, and
// restore writes neither the entry nor the manifest.
func TestAppendedEntry(t *testing.T) {
	t.Parallel()
	mustHave(t, "zip")
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"s/app/a": {content: "a"}, "inj/app/zz": {content: "injected"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-o", "b.zip", "s/app"), exitComplete)
	os.Remove(filepath.Join(dir, "b.zip.receipt.json"))
	zipCmd := exec.Command("zip", "-q", "../b.zip", "app/zz")
	zipCmd.Dir = filepath.Join(dir, "inj")
	if out, err := zipCmd.CombinedOutput(); err != nil {
		t.Fatalf("zip: %v\n%s", err, out)
	}
	checkTampered(t, dir, "b.zip", "app/zz: not in the manifest")
}

// TestManifestNotLast moves the manifest of a backup away from the end with Go's zip writer,
// an entry the manifest does not list after it: that entry is damage, wherever the manifest
// stands; two manifests are damage too.
func TestManifestNotLast(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"app/a": {content: "a"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-o", "b.zip", "app"), exitComplete)
	tests := []struct {
		name  string
		order []string // entries of b.zip, "+" an injected file app/zz, "+/" a directory app/zd/
		want  string
	}{
		{"manifest first", []string{".backup-manifest.json", "app/", "app/a"}, "app/: directory entry after the manifest, which backup writes last"},
		{"file after it", []string{"app/", "app/a", ".backup-manifest.json", "+"}, "app/zz: not in the manifest"},
		{"file before it", []string{"app/", "+", "app/a", ".backup-manifest.json"}, "app/zz: not in the manifest"},
		{"directory after it", []string{"app/", "app/a", ".backup-manifest.json", "+/"}, "app/zd/: directory entry after the manifest, which backup writes last"},
		// A folder entry the manifest's dirs do not list, where backup writes folders: every
		// folder backup stores has its record there (manifest v2 on).
		{"directory before it", []string{"app/", "+/", "app/a", ".backup-manifest.json"}, "app/zd/: not in the manifest"},
		{"two manifests", []string{"app/", "app/a", ".backup-manifest.json", ".backup-manifest.json"}, ".backup-manifest.json: duplicate name"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := filepath.Join(dir, "t"+string(rune('0'+i))+".zip")
			reorder(t, filepath.Join(dir, "b.zip"), name, tt.order)
			checkTampered(t, dir, filepath.Base(name), tt.want)
		})
	}
}

// reorder writes the entries of the archive src to dst in the order given, copied raw.
func reorder(t *testing.T, src, dst string, order []string) {
	t.Helper()
	zr, err := zip.OpenReader(src)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range order {
		switch name {
		case "+", "+/":
			fh := &zip.FileHeader{Name: "app/zz", Method: zip.Deflate}
			if name == "+/" {
				fh = &zip.FileHeader{Name: "app/zd/"}
			}
			fh.SetMode(0o755)
			w, err := zw.CreateHeader(fh)
			if err == nil && name == "+" {
				_, err = io.WriteString(w, "injected")
			}
			if err != nil {
				t.Fatal(err)
			}
			continue
		}
		i := slices.IndexFunc(zr.File, func(f *zip.File) bool { return f.Name == name })
		if i < 0 {
			t.Fatalf("no entry %s", name)
		}
		if err := zw.Copy(zr.File[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkTampered checks that verify of the archive name in dir exits 1 naming want and never
// says "no manifest", and that restore exits 1 and writes neither the manifest nor the
// entry it does not list.
func checkTampered(t *testing.T, dir, name, want string) {
	t.Helper()
	r := backup(t, runOpts{dir: dir}, "verify", name)
	if r.code != exitFailed || !strings.Contains(r.stderr, want+"\n") || strings.Contains(r.stdout+r.stderr, "no manifest") {
		t.Errorf("verify: exit %d, stdout %q stderr %q; want %d naming %q", r.code, r.stdout, r.stderr, exitFailed, want)
	}
	dest := filepath.Join(dir, name+".dest")
	r = backup(t, runOpts{dir: dir}, "restore", name, dest)
	got := listTree(t, dest)
	if r.code != exitFailed || slices.ContainsFunc(got, func(p string) bool {
		return strings.Contains(p, "manifest") || strings.Contains(p, "zz") || strings.Contains(p, "zd")
	}) {
		t.Errorf("restore: exit %d, wrote %q; want %d, nothing that the manifest does not list\n%s", r.code, got, exitFailed, r.stderr)
	}
}

// TestAttackJSONNamesNotUTF8: two files whose names differ only in bytes that are not
// UTF-8 ("bad\xff", "bad\xfe"). docs/formats.md: "Every JSON record is UTF-8; a name that is
// not has a _b64 twin", and docs/operations.md: "--json, --json-lines, receipts and
// manifests give every name as it is". The receipt and manifest do (path_b64), but list
// --json printed both entries as "app/bad\ufffd", with no name_b64, and restore --json
// listed the conflict the same way: a program reading the JSON cannot tell the two files
// apart or name either of them (to --include it, or to remove the conflict).
func TestAttackJSONNamesNotUTF8(t *testing.T) {
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

// TestAttackSetsJSONNamesNotUTF8: the fix of TestAttackJSONNamesNotUTF8 gives list's
// and restore's names a _b64 twin, but sets --json still gives each set's folder only as a
// plain JSON string: two sets s\xffet and s\xfeet of one location are both
// "…/s\ufffdet", and a program reading the JSON (to run status on the unhealthy one, to
// page about it) cannot tell them apart or name either. docs/formats.md: "Every JSON record
// is UTF-8; a name that is not has a _b64 twin". status --json's "dir" and prune --json's
// "dir" lose the bytes the same way.
func TestAttackSetsJSONNamesNotUTF8(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"f": {content: "1"}})
	for _, set := range []string{"s\xffet", "s\xfeet"} {
		mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", filepath.Join(dir, "sets", set), "src/app"), exitComplete)
	}
	r := backup(t, runOpts{dir: dir}, "sets", "--json", filepath.Join(dir, "sets"))
	mustExit(t, r, exitComplete)
	var sets []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &sets); err != nil {
		t.Fatalf("sets --json: %v: %q", err, r.stdout)
	}
	seen := map[string]bool{}
	for _, s := range sets {
		key := ""
		for k, v := range s {
			if k == "set" || strings.HasSuffix(k, "_b64") {
				key += fmt.Sprintf("%s=%v;", k, v)
			}
		}
		if seen[key] {
			t.Errorf("sets --json gives two sets as %q: the folders s\\xffet and s\\xfeet are lost", key)
		}
		seen[key] = true
	}
}

// TestAttackSetSourceNotUTF8: a set's SOURCE whose base name is not UTF-8 ("b\xffad").
// It is not refused as a name that cannot name a set's archives (docs/sets.md: such a
// SOURCE is refused with exit 2, nothing written), yet no run of it can ever be activated:
// the receipt records archive.path in a plain JSON string, "b\ufffdad-….zip", which the
// activation then compares with the archive's real name and refuses ("LATEST not moved: not
// activating b\xffad-….zip: its receipt describes another archive"). Every run wrote an
// archive and a receipt saying complete and exited 1; LATEST never appeared, and status
// and prune refused the set ("LATEST: is missing, but the set holds 1 run").
func TestAttackSetSourceNotUTF8(t *testing.T) {
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

// TestAttackSetRunNamesJSONNotUTF8: a set's runs are the files whose names match
// SOURCE-STAMP.zip, any bytes as SOURCE (backupset/names.go), so a set may hold
// b\xff-….zip and b\xfe-….zip (copied in, or left by another tool); status --json's
// runs[].name, prune --json's runs[].name and prune --json-lines' decision name give both
// as "b\ufffd-….zip" with no name_b64 twin (status.go:48, prune.go:58), where docs/sets.md
// promises the _b64 twin "as in every --json of a set's commands": a script cannot tell
// which run prune deleted or kept.
func TestAttackSetRunNamesJSONNotUTF8(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f": {content: "1"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "set", "app"), exitComplete)
	set := filepath.Join(dir, "set")
	data, err := os.ReadFile(filepath.Join(set, readLatest(t, set)))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"b\xff-20261101T000000Z.zip", "b\xfe-20261101T000000Z.zip"} {
		if err := os.WriteFile(filepath.Join(set, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what string, runs []map[string]any) {
		t.Helper()
		seen := map[string]bool{}
		for _, run := range runs {
			key := ""
			for k, v := range run {
				if k == "name" || strings.HasPrefix(k, "name_") {
					key += k + "=" + v.(string) + ";"
				}
			}
			if seen[key] {
				t.Errorf("%s gives two runs as %q: the files b\\xff-… and b\\xfe-… cannot be told apart", what, key)
			}
			seen[key] = true
		}
		if len(runs) != 3 {
			t.Errorf("%s lists %d runs, want 3", what, len(runs))
		}
	}
	var status struct{ Runs []map[string]any }
	r := backup(t, runOpts{dir: dir}, "status", "--json", "set")
	if err := json.Unmarshal([]byte(r.stdout), &status); err != nil {
		t.Fatalf("status --json: %v: %q", err, r.stdout)
	}
	check("status --json", status.Runs)
	var prune struct{ Runs []map[string]any }
	r = backup(t, runOpts{dir: dir}, "prune", "--keep-last", "1", "--dry-run", "--json", "set")
	if err := json.Unmarshal([]byte(r.stdout), &prune); err != nil {
		t.Fatalf("prune --json: %v: %q", err, r.stdout)
	}
	check("prune --json", prune.Runs)
	r = backup(t, runOpts{dir: dir}, "prune", "--keep-last", "1", "--dry-run", "--json-lines", "set")
	var decisions []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("prune --json-lines: %v: %q", err, line)
		}
		if ev["type"] == "decision" {
			delete(ev, "type")
			decisions = append(decisions, ev)
		}
	}
	check("prune --json-lines", decisions)
}

// TestAttackRestoreUndoJSONNotUTF8: restore --force writes its before-state beside DEST
// under DEST's own name (DEST-before-restore-STAMP.zip), and restore --json gives the way
// back as "undo": {"archive", "receipt"} in plain JSON strings (restore_undo.go:21-22), as it
// gives "dest" and "archive" (restore.go:85-86): a DEST named d\xff gives
// "d\ufffd-before-restore-….zip", no file of that name exists, and no _b64 twin says which
// does, where docs/formats.md says "Every JSON record is UTF-8; a name that is not has a
// _b64 twin". The human line quotes the same path losslessly ("d\xff-before-restore-…").
func TestAttackRestoreUndoJSONNotUTF8(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dest := "d\xff"
	makeTree(t, dir, map[string]node{"app/f": {content: "new\n"}, dest + "/app/f": {content: "old\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "a.zip", "app"), exitComplete)
	r := backup(t, runOpts{dir: dir}, "restore", "--force", "--json", "a.zip", dest)
	mustExit(t, r, exitComplete)
	var out struct {
		Undo map[string]string
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("restore --json: %v: %q", err, r.stdout)
	}
	if out.Undo == nil {
		t.Fatalf("restore --force --json gave no undo: %s", r.stdout)
	}
	for _, field := range []string{"archive", "receipt"} {
		path := out.Undo[field]
		if _, err := os.Lstat(path); err != nil && out.Undo[field+"_b64"] == "" {
			t.Errorf("restore --json's undo.%s is %q, which does not exist (%v), and has no %s_b64 twin", field, path, err, field)
		}
	}
}

// The tests below hold each path a --json output carries against docs/formats.md: "Every
// JSON record is UTF-8; a name that is not has a _b64 twin". Each runs the command once with
// a path holding the byte 0xff, whose twin must give back its bytes, and once with a UTF-8
// path, which must have none.

// jsonObject decodes out, a --json document, after checking that it is UTF-8.
func jsonObject(t *testing.T, what, out string) map[string]any {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("%s is not UTF-8: %q", what, out)
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(out), &obj); err != nil {
		t.Fatalf("%s: %v: %q", what, err, out)
	}
	return obj
}

// jsonLinesResult decodes the result of out, a --json-lines stream, each line checked as
// jsonObject checks it.
func jsonLinesResult(t *testing.T, what, out string) map[string]any {
	t.Helper()
	var res map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if ev := jsonObject(t, what, line); ev["type"] == "result" {
			res, _ = ev["result"].(map[string]any)
		}
	}
	if res == nil {
		t.Fatalf("%s has no result line: %q", what, out)
	}
	return res
}

// checkTwin checks that obj carries raw in field: for raw that is not UTF-8, field_b64 holds
// its bytes in standard base64 and field shows it with U+FFFD; for raw that is, field holds
// it as it is and there is no field_b64.
func checkTwin(t *testing.T, what string, obj map[string]any, field, raw string) {
	t.Helper()
	text, _ := obj[field].(string)
	b64, twin := obj[field+"_b64"]
	if utf8.ValidString(raw) {
		if text != raw || twin {
			t.Errorf("%s: %s %q, %s_b64 %v; want %q and no twin", what, field, text, field, b64, raw)
		}
		return
	}
	s, _ := b64.(string)
	got, err := base64.StdEncoding.Strict().DecodeString(s)
	switch {
	case !twin:
		t.Errorf("%s: %s %q has no %s_b64; want one holding the bytes of %q", what, field, text, field, raw)
	case err != nil || string(got) != raw:
		t.Errorf("%s: %s_b64 %v decodes to %q (%v); want the bytes of %q", what, field, b64, got, err, raw)
	}
	if want := strings.ToValidUTF8(raw, "\uFFFD"); text != want {
		t.Errorf("%s: %s %q, want %q", what, field, text, want)
	}
}

// TestB64VerifyList: verify --json and --json-lines give "archive" and "receipt", and list
// --json "archive", with a twin when the path is not UTF-8; also the answer of verify for an
// archive that cannot be read, and a --receipt elsewhere.
func TestB64VerifyList(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f": {content: "1\n"}})
	for _, name := range []string{"a\xff.zip", "a.zip"} {
		t.Run(name, func(t *testing.T) {
			arch := filepath.Join(dir, name)
			mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "app"), exitComplete)
			r := backup(t, runOpts{}, "verify", "--json", arch)
			mustExit(t, r, exitComplete)
			obj := jsonObject(t, "verify --json", r.stdout)
			checkTwin(t, "verify --json", obj, "archive", arch)
			checkTwin(t, "verify --json", obj, "receipt", arch+".receipt.json")
			r = backup(t, runOpts{}, "verify", "--json-lines", arch)
			mustExit(t, r, exitComplete)
			obj = jsonLinesResult(t, "verify --json-lines", r.stdout)
			checkTwin(t, "verify --json-lines", obj, "archive", arch)
			checkTwin(t, "verify --json-lines", obj, "receipt", arch+".receipt.json")
			r = backup(t, runOpts{}, "list", "--json", arch)
			mustExit(t, r, exitComplete)
			checkTwin(t, "list --json", jsonObject(t, "list --json", r.stdout), "archive", arch)

			missing := filepath.Join(dir, "missing-"+name)
			r = backup(t, runOpts{}, "verify", "--json", missing)
			mustExit(t, r, exitFailed)
			checkTwin(t, "verify --json of a missing archive", jsonObject(t, "verify --json", r.stdout), "archive", missing)
		})
	}
	data, err := os.ReadFile(filepath.Join(dir, "a.zip.receipt.json"))
	if err != nil {
		t.Fatal(err)
	}
	receipt := filepath.Join(dir, "r\xff.json")
	if err := os.WriteFile(receipt, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{}, "verify", "--json", "--receipt", receipt, filepath.Join(dir, "a.zip"))
	mustExit(t, r, exitComplete)
	checkTwin(t, "verify --json --receipt", jsonObject(t, "verify --json", r.stdout), "receipt", receipt)
}

// TestB64Restore: restore --json and --json-lines give "archive" and "dest" with a twin when
// the path is not UTF-8, also for an archive that cannot be read.
func TestB64Restore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f": {content: "1\n"}})
	for _, c := range []struct{ archive, dest string }{{"a\xff.zip", "d\xff"}, {"a.zip", "d"}, {"b.zip", "e\xff"}} {
		t.Run(c.archive+" "+c.dest, func(t *testing.T) {
			arch, dest := filepath.Join(dir, c.archive), filepath.Join(dir, c.dest)
			mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "app"), exitComplete)
			r := backup(t, runOpts{}, "restore", "--json", arch, dest)
			mustExit(t, r, exitComplete)
			obj := jsonObject(t, "restore --json", r.stdout)
			checkTwin(t, "restore --json", obj, "archive", arch)
			checkTwin(t, "restore --json", obj, "dest", dest)
			r = backup(t, runOpts{}, "restore", "--json-lines", arch, dest+"-lines")
			mustExit(t, r, exitComplete)
			obj = jsonLinesResult(t, "restore --json-lines", r.stdout)
			checkTwin(t, "restore --json-lines", obj, "archive", arch)
			checkTwin(t, "restore --json-lines", obj, "dest", dest+"-lines")

			missing := filepath.Join(dir, "missing-"+c.archive)
			r = backup(t, runOpts{}, "restore", "--json", missing, dest+"-missing")
			mustExit(t, r, exitFailed)
			obj = jsonObject(t, "restore --json of a missing archive", r.stdout)
			checkTwin(t, "restore --json of a missing archive", obj, "archive", missing)
			checkTwin(t, "restore --json of a missing archive", obj, "dest", dest+"-missing")
		})
	}
}

// TestB64AdoptFrom: adopt --json gives "from", the ARCHIVE adopted, with a twin when it is
// not UTF-8.
func TestB64AdoptFrom(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f": {content: "1\n"}})
	for i, name := range []string{"x\xff.zip", "x.zip"} {
		t.Run(name, func(t *testing.T) {
			arch := filepath.Join(dir, name)
			mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "app"), exitComplete)
			r := backup(t, runOpts{}, "adopt", "--json", filepath.Join(dir, fmt.Sprint("set", i)), arch)
			mustExit(t, r, exitComplete)
			checkTwin(t, "adopt --json", jsonObject(t, "adopt --json", r.stdout), "from", arch)
		})
	}
}

// TestB64PruneAttic: prune --json and --json-lines give "attic" with a twin when the folder's
// path is not UTF-8.
func TestB64PruneAttic(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f": {content: "1\n"}})
	set := filepath.Join(dir, "set")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app"), exitComplete)
	for _, name := range []string{"attic\xff", "attic"} {
		t.Run(name, func(t *testing.T) {
			attic := filepath.Join(dir, name)
			if err := os.Mkdir(attic, 0o755); err != nil {
				t.Fatal(err)
			}
			r := backup(t, runOpts{}, "prune", "--keep-last", "1", "--attic", attic, "--json", set)
			mustExit(t, r, exitComplete)
			checkTwin(t, "prune --json", jsonObject(t, "prune --json", r.stdout), "attic", attic)
			r = backup(t, runOpts{}, "prune", "--keep-last", "1", "--attic", attic, "--json-lines", set)
			mustExit(t, r, exitComplete)
			checkTwin(t, "prune --json-lines", jsonLinesResult(t, "prune --json-lines", r.stdout), "attic", attic)
		})
	}
}

// TestB64StatusLatest: status --json's "latest" and "newest_complete" name archives of the
// set. Those of a set on disk are UTF-8 (a receipt records its archive's name as UTF-8 text,
// and a run whose name is not can never match it), so a real set shows them without a twin;
// newStatusJSON gives the twin should such a name get there.
func TestB64StatusLatest(t *testing.T) {
	t.Parallel()
	_, set, a, b := newestSet(t)
	mustExit(t, backup(t, runOpts{}, "activate", set, a), exitComplete)
	r := backup(t, runOpts{}, "status", "--json", set)
	mustExit(t, r, exitComplete)
	obj := jsonObject(t, "status --json", r.stdout)
	checkTwin(t, "status --json", obj, "latest", a)
	checkTwin(t, "status --json", obj, "newest_complete", b)

	latest, newer := "b\xff-20261101T000000Z.zip", "b\xff-20261102T000000Z.zip"
	s := &backupset.Status{Latest: &backupset.Entry{Name: latest}, Newer: &backupset.Entry{Name: newer}}
	var buf bytes.Buffer
	if err := writeJSON(&buf, newStatusJSON(set, s, nil)); err != nil {
		t.Fatal(err)
	}
	obj = jsonObject(t, "newStatusJSON", buf.String())
	checkTwin(t, "newStatusJSON", obj, "latest", latest)
	checkTwin(t, "newStatusJSON", obj, "newest_complete", newer)
}

// TestB64Receipt: the receipt (in its file, and as create --json prints it) gives
// "archive"."path" a twin when the archive's path is not UTF-8, and "sources" a list of
// twins in their order ("" for a source that is UTF-8) when any is not.
func TestB64Receipt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, src := range []string{"s\xff", "app"} {
		makeTree(t, filepath.Join(dir, src), map[string]node{"f": {content: "1\n"}})
	}
	for _, c := range []struct {
		out     string
		sources []string
	}{{"o\xff.zip", []string{"s\xff"}}, {"o.zip", []string{"app"}}, {"two.zip", []string{"app", "s\xff"}}} {
		t.Run(c.out, func(t *testing.T) {
			arch := filepath.Join(dir, c.out)
			r := backup(t, runOpts{dir: dir}, append([]string{"create", "--json", "-o", arch}, c.sources...)...)
			mustExit(t, r, exitComplete)
			file, err := os.ReadFile(arch + ".receipt.json")
			if err != nil {
				t.Fatal(err)
			}
			for what, out := range map[string]string{"create --json": r.stdout, "the receipt": string(file)} {
				obj := jsonObject(t, what, out)
				info, _ := obj["archive"].(map[string]any)
				checkTwin(t, what+": archive", info, "path", arch)
				checkSourceTwins(t, what, obj, dir, c.sources)
			}
		})
	}
}

// checkSourceTwins checks a receipt's "sources" and "sources_b64" against the SOURCE names
// given in dir.
func checkSourceTwins(t *testing.T, what string, obj map[string]any, dir string, sources []string) {
	t.Helper()
	texts, _ := obj["sources"].([]any)
	b64s, twins := obj["sources_b64"].([]any)
	if len(texts) != len(sources) || twins && len(b64s) != len(sources) {
		t.Fatalf("%s: sources %v, sources_b64 %v; want %d of each", what, texts, b64s, len(sources))
	}
	anyRaw := false
	for i, src := range sources {
		raw := filepath.Join(dir, src)
		source := map[string]any{"source": texts[i]}
		if twins && b64s[i] != "" {
			source["source_b64"] = b64s[i]
		}
		checkTwin(t, what+": sources", source, "source", raw)
		anyRaw = anyRaw || !utf8.ValidString(raw)
	}
	if twins != anyRaw {
		t.Errorf("%s: sources_b64 given: %v, want %v", what, twins, anyRaw)
	}
}
