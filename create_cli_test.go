package main

import (
	"archive/zip"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"backup/format"
)

func TestCreateDryRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "12345"}, "q": {kind: "fifo"}, "c/CACHEDIR.TAG": {content: "Signature: 8a477f597d28d172789f06886806bc55"}})
	r := backup(t, runOpts{dir: dir}, "create", "-n", "--json", "--exclude-caches", "--output-dir", "newdir", "app")
	if r.code != exitComplete {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var rc format.Receipt
	if err := json.Unmarshal([]byte(r.stdout), &rc); err != nil {
		t.Fatalf("stdout is not a receipt: %v\n%s", err, r.stdout)
	}
	if !rc.DryRun || rc.Archive != nil || rc.Counts.Files != 1 || rc.Counts.Bytes != 5 || rc.Counts.Skipped != 1 || rc.Counts.Excluded != 1 {
		t.Errorf("receipt %+v; want dry_run, no archive, 1 file of 5 bytes, 1 skipped, 1 excluded", rc)
	}
	if !strings.Contains(r.stdout, `"archive": null`) {
		t.Errorf("dry-run receipt lacks \"archive\": null:\n%s", r.stdout)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("a dry run wrote something: %v", entries)
	}
}

func TestCreateQuietAndJSON(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a"}})
	r := backup(t, runOpts{dir: dir}, "create", "-q", "-o", "a.zip", "app")
	if r.code != exitComplete || r.stdout != "" || r.stderr != "" {
		t.Errorf("-q on success: exit %d, stdout %q, stderr %q; want silence", r.code, r.stdout, r.stderr)
	}
	r = backup(t, runOpts{dir: dir}, "create", "--json", "--progress", "never", "-o", "b.zip", "app")
	rc := readReceipt(t, filepath.Join(dir, "b.zip.receipt.json"))
	data, _ := rc.Marshal()
	if r.stdout != string(data) {
		t.Errorf("--json printed\n%s\nbut the receipt file says\n%s", r.stdout, data)
	}
	if !strings.HasPrefix(r.stderr, "backup: complete: 1 file,") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("summary %q, want one line", r.stderr)
	}
}

func TestCreateExcludes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{
		"keep.txt":           {content: "k"},
		"debug.log":          {content: "l"},
		"logs/important.log": {content: "i"},
		"build/out.o":        {content: "o"},
		"src/build/x":        {content: "x"},
		"cache/CACHEDIR.TAG": {content: "Signature: 8a477f597d28d172789f06886806bc55\n"},
		"cache/blob":         {content: "b"},
		"fake/CACHEDIR.TAG":  {content: "not a signature"},
		"patterns-not-here":  {content: "p"},
	})
	makeTree(t, dir, map[string]node{"ex": {content: "# comment\n/build/\n\n"}})
	r := backup(t, runOpts{dir: dir}, "create", "-x", "*.log", "-x", "!important.log", "--exclude-from", "ex",
		"--exclude-caches", "-o", "app/self.zip", "app")
	if r.code != exitComplete {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	rc := readReceipt(t, filepath.Join(dir, "app/self.zip.receipt.json"))
	var got []string
	for _, e := range rc.Excluded {
		got = append(got, e.Path+" "+e.Rule)
	}
	// The temp file is the only piece of this run in the tree while it walks.
	if len(got) == 0 || !strings.HasPrefix(got[0], "app/.self.zip.tmp-") || !strings.HasSuffix(got[0], " self") {
		t.Errorf("excluded %q: the temp file is not first, as self", got)
	} else if want := []string{"app/build /build/", "app/cache CACHEDIR.TAG", "app/debug.log *.log"}; !slices.Equal(got[1:], want) {
		t.Errorf("excluded %q, want %q", got[1:], want)
	}
	entries := readZip(t, filepath.Join(dir, "app/self.zip"))
	for _, name := range []string{"app/keep.txt", "app/logs/important.log", "app/src/build/x", "app/fake/CACHEDIR.TAG"} {
		if _, ok := entries[name]; !ok {
			t.Errorf("%s missing", name)
		}
	}
}

// TestCreateOldDates: files dated before 1980 (which the DOS date cannot hold) are archived
// with their exact time.
func TestCreateOldDates(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"old": {content: "1975"}, "new": {content: "2030"}})
	dates := map[string]time.Time{
		"app/old": time.Date(1975, 6, 1, 12, 0, 0, 0, time.UTC),
		"app/new": time.Date(2030, 1, 2, 3, 4, 6, 0, time.UTC),
	}
	for name, tm := range dates {
		if err := os.Chtimes(filepath.Join(dir, name), tm, tm); err != nil {
			t.Fatal(err)
		}
	}
	r := backup(t, runOpts{dir: dir}, "create", "-o", "a.zip", "app")
	if r.code != exitComplete {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	readZip(t, filepath.Join(dir, "a.zip"))
	zr, err := zip.OpenReader(filepath.Join(dir, "a.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		if want, ok := dates[f.Name]; ok && !f.Modified.Equal(want) {
			t.Errorf("%s: modified %v, want %v", f.Name, f.Modified, want)
		}
	}
}

// TestCreateChangingFile backs up a file whose size says 0 but which reads as more, as files
// in /proc do: it is read three times, the last copy kept, with a "changed" warning that
// loses nothing, unless --fail-on changed.
func TestCreateChangingFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := backup(t, runOpts{dir: dir}, "create", "-o", "a.zip", "/proc/self/status")
	if r.code != exitComplete {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	rc := readReceipt(t, filepath.Join(dir, "a.zip.receipt.json"))
	if len(rc.Warnings) != 1 || rc.Warnings[0].Op != "changed" || rc.Warnings[0].Lost || rc.Counts.Files != 1 {
		t.Errorf("warnings %+v, counts %+v; want one changed warning, not lost, and the file", rc.Warnings, rc.Counts)
	}
	if content := readZip(t, filepath.Join(dir, "a.zip"))["status"]; !strings.Contains(content, "Name:") {
		t.Errorf("archived copy %q is not the file's content", content)
	}
	for _, flag := range []string{"--fail-on=changed", "--strict"} {
		r = backup(t, runOpts{dir: dir}, "create", flag, "--force", "-o", "b.zip", "/proc/self/status")
		if r.code != exitIncomplete || !strings.Contains(r.stderr, "lost status: changed: changed while being read") {
			t.Errorf("%s: exit %d, stderr %q; want %d and the path", flag, r.code, r.stderr, exitIncomplete)
		}
	}
}

// TestCreateSymlinkSource: a SOURCE that is a symlink is followed and stored under the name
// given; a SOURCE may also be a single regular file.
func TestCreateSymlinkSource(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{
		"real/f":  {content: "f"},
		"current": {kind: "symlink", content: "real"},
		"one.txt": {content: "one"},
	})
	r := backup(t, runOpts{dir: dir}, "create", "-o", "a.zip", "current", "one.txt")
	if r.code != exitComplete {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	entries := readZip(t, filepath.Join(dir, "a.zip"))
	delete(entries, ".backup-manifest.json")
	want := map[string]string{"current/": "", "current/f": "f", "one.txt": "one"}
	if len(entries) != len(want) || entries["current/f"] != "f" || entries["one.txt"] != "one" {
		t.Errorf("entries %v, want %v", entries, want)
	}
}

// TestCreateProgress: the bar is drawn on stderr only when asked for (or on a terminal), and
// is erased (\r, then erase to the end of the line) before the summary.
func TestCreateProgress(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"r": {content: randomString(t, 8<<20)}})
	r := backup(t, runOpts{dir: dir}, "create", "--progress", "always", "--level", "9", "-j", "1", "-o", "a.zip", "app")
	if r.code != exitComplete || !strings.Contains(r.stderr, "MiB") || !strings.Contains(r.stderr, "\r") {
		t.Errorf("--progress always: exit %d, stderr %q; want a bar", r.code, r.stderr)
	}
	if !strings.HasSuffix(r.stderr, "\r\x1b[Kbackup: complete: 1 file, 8.0 MiB read, archive 8.0 MiB; 0 skipped, 0 excluded, 0 warnings -> "+filepath.Join(dir, "a.zip")+"\n") {
		t.Errorf("the summary does not start on a cleared line: %q", r.stderr[max(0, len(r.stderr)-200):])
	}
}

// TestCreateEmptySource: an empty directory gives a valid archive holding the directory and
// the manifest.
func TestCreateEmptySource(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"empty": {kind: "dir"}})
	r := backup(t, runOpts{dir: dir}, "create", "-o", "e.zip", "empty")
	if r.code != exitComplete {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	entries := readZip(t, filepath.Join(dir, "e.zip"))
	if len(entries) != 2 || !strings.Contains(entries[".backup-manifest.json"], `"files":[]`) {
		t.Errorf("entries %v, want empty/ and a manifest listing no files", keys(entries))
	}
	if _, ok := entries["empty/"]; !ok {
		t.Error("the directory entry is missing")
	}
}
