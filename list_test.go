package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestList(t *testing.T) {
	t.Parallel()
	mustRoot(t) // the device node
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{
		"a.txt":    {content: "alpha\n", mode: 0o640},
		"empty":    {kind: "dir"},
		"ctl.sock": {kind: "socket"},
		"null":     {kind: "device"},
	})
	mtime := time.Date(1965, 4, 3, 2, 1, 0, 0, time.UTC)
	os.Chtimes(filepath.Join(dir, "app/a.txt"), mtime, mtime)
	arch := filepath.Join(dir, "a.zip")
	if r := backup(t, runOpts{dir: dir}, "create", "-o", arch, "app"); r.code != exitComplete {
		t.Fatalf("create: %d %s", r.code, r.stderr)
	}

	r := backup(t, runOpts{dir: dir}, "list", arch)
	if r.code != exitComplete || r.stdout != "app/\napp/a.txt\napp/empty/\n" {
		t.Errorf("list: exit %d stdout %q", r.code, r.stdout)
	}
	wantSummary := "backup list: 3 entries; status recorded at backup: complete; 2 skipped, 0 excluded, 0 warnings\n" +
		"  skipped app/ctl.sock (socket)\n  skipped app/null (device)\n"
	if r.stderr != wantSummary {
		t.Errorf("stderr %q, want %q", r.stderr, wantSummary)
	}

	r = backup(t, runOpts{dir: dir}, "list", "--long", arch)
	wantLine := "-rw-r-----            6 1965-04-03 02:01:00 app/a.txt"
	if r.code != exitComplete || !strings.Contains(r.stdout, wantLine+"\n") {
		t.Errorf("--long: exit %d stdout %q, want a line %q", r.code, r.stdout, wantLine)
	}

	r = backup(t, runOpts{dir: dir}, "list", "--json", arch)
	var got listJSON
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("--json %q: %v", r.stdout, err)
	}
	if len(got.Entries) != 3 || got.Status != "complete" || len(got.Skipped) != 2 || !got.Manifest {
		t.Fatalf("--json: %+v", got)
	}
	e := got.Entries[1]
	if e.Name != "app/a.txt" || e.Type != "file" || e.Mode != "0640" || e.Size != 6 || !e.Modified.Equal(mtime) || len(e.SHA256) != 64 {
		t.Errorf("--json entry %+v", e)
	}
	if got.Entries[2].Type != "dir" || got.Entries[2].Name != "app/empty/" {
		t.Errorf("--json entry %+v, want the directory app/empty/", got.Entries[2])
	}
}

func TestListForeign(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "f.zip")
	writeForeignZip(t, path, map[string]string{"x": "1"})
	r := backup(t, runOpts{dir: dir}, "list", path)
	if r.code != exitComplete || r.stdout != "x\n" || !strings.Contains(r.stderr, "no manifest: not made by backup") {
		t.Errorf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	if r := backup(t, runOpts{dir: dir}, "list", filepath.Join(dir, "missing.zip")); r.code != exitFailed ||
		r.stderr != "backup list: "+filepath.Join(dir, "missing.zip")+": no such file or directory\n" {
		t.Errorf("missing archive: exit %d stderr %q", r.code, r.stderr)
	}
}

// TestListSymlinkTargets: list shows each stored symlink's target as the manifest records
// it, without reading the entry's data (here changed after the backup): --long as "NAME ->
// TARGET", a target that would act on a terminal quoted, and --json as "target", with
// "target_b64" for one that is not UTF-8.
func TestListSymlinkTargets(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{
		"f":   {content: "f\n"},
		"l":   {kind: "symlink", content: "f"},
		"abs": {kind: "symlink", content: "/etc/x y"},
		"esc": {kind: "symlink", content: "a\x1b[2J\nb"},
		"raw": {kind: "symlink", content: "\xff"},
	})
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--symlinks", "store", "-o", arch, "app"), exitComplete)
	flipEntryByte(t, arch, "app/l") // its data, "f", no longer says what the manifest says

	r := backup(t, runOpts{dir: dir}, "list", "--long", arch)
	mustExit(t, r, exitComplete)
	for _, want := range []string{" app/l -> f\n", " app/abs -> /etc/x y\n", ` app/esc -> "a\x1b[2J\nb"` + "\n", ` app/raw -> "\xff"` + "\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("--long does not show %q:\n%s", want, r.stdout)
		}
	}
	r = backup(t, runOpts{dir: dir}, "list", "--json", arch)
	var got struct {
		Entries []map[string]any `json:"entries"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("--json %q: %v", r.stdout, err)
	}
	targets := map[string]string{}
	for _, e := range got.Entries {
		if e["type"] == "symlink" {
			targets[e["name"].(string)] = fmt.Sprint(e["target"], " ", e["target_b64"])
		}
	}
	want := map[string]string{"app/l": "f <nil>", "app/abs": "/etc/x y <nil>", "app/esc": "a\x1b[2J\nb <nil>", "app/raw": "\ufffd /w=="}
	if !maps.Equal(targets, want) {
		t.Errorf("--json targets %q, want %q", targets, want)
	}
}

// TestListHugeDeclaredSize: an entry whose header declares 2^64-1 bytes (a zip64 field;
// verify and restore call it damaged) is listed with that size, where list -l and --json
// showed -1, the declared size taken as a signed number.
func TestListHugeDeclaredSize(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "huge.zip")
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "huge", Method: zip.Store, CompressedSize64: 1, UncompressedSize64: math.MaxUint64})
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("x"))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir}, "list", "-l", path)
	if !strings.Contains(r.stdout, " 18446744073709551615 ") {
		t.Errorf("list -l: exit %d stdout %q stderr %q, want the size 18446744073709551615", r.code, r.stdout, r.stderr)
	}
	r = backup(t, runOpts{dir: dir}, "list", "--json", path)
	if !strings.Contains(r.stdout, `"size":18446744073709551615`) && !strings.Contains(r.stdout, `"size": 18446744073709551615`) {
		t.Errorf("list --json: exit %d stdout %q, want the size 18446744073709551615", r.code, r.stdout)
	}
}
