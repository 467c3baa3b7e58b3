package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackRestoreStdoutIntoDest runs restore --force with stdout appended (>>) to a file
// inside DEST that the archive holds too. The one check keeps every output out of DEST (a
// --undo-dir there is refused), but stdout's file was checked only against the archive
// and the identity files: the restore replaced that file, wrote its --json report (or
// --json-lines events) into the replaced one, which no name reaches any more, and exited
// 0; the report was lost, and the file, said restored, had neither the user's lines nor
// the report. Correct: exit 2 with one line before anything is done, the file as it was.
func TestAttackRestoreStdoutIntoDest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f.txt": {content: "f\n"}, "sub/g.txt": {content: "g\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "a.zip", "app"), exitComplete)
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "-q", "a.zip", "dest"), exitComplete)
	for _, tc := range []struct {
		into string
		args []string
	}{
		{"dest/app/f.txt", []string{"restore", "--force", "--json", "a.zip", "dest"}},
		{"dest/app/sub/g.txt", []string{"restore", "--force", "--json-lines", "a.zip", "dest"}},
		{"dest/app/f.txt", []string{"restore", "--force", "--json", "a.zip", "lnk/.."}},
	} {
		path := filepath.Join(dir, tc.into)
		if err := os.WriteFile(path, []byte("the user's own lines\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Remove(filepath.Join(dir, "lnk"))
		if err := os.Symlink("dest/app", filepath.Join(dir, "lnk")); err != nil {
			t.Fatal(err)
		}
		code, stderr, changed := appendStdout(t, dir, path, tc.args...)
		if code != exitUsage || strings.Count(strings.TrimSpace(stderr), "\n") > 1 || changed {
			t.Errorf("%q >> %s: exit %d, stderr %q, changed %v; want 2, one line, unchanged", tc.args, tc.into, code, stderr, changed)
		}
	}
	// A file in DEST that the archive does not hold is left as it is, and gets the report:
	// backup restore --json a.zip . > report.json.
	for _, tc := range []struct {
		into string
		args []string
	}{
		{"dest/report.json", []string{"restore", "--force", "--json", "a.zip", "dest"}},
		{"dest/app/events.jsonl", []string{"restore", "--force", "--json-lines", "a.zip", "dest"}},
	} {
		path := filepath.Join(dir, tc.into)
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if code, stderr, changed := appendStdout(t, dir, path, tc.args...); code != exitComplete || !changed {
			t.Errorf("%q >> %s: exit %d, stderr %q, written %v; want 0 and the report", tc.args, tc.into, code, stderr, changed)
		}
	}
	// Outside DEST stdout's file is fine.
	report := filepath.Join(dir, "report.json")
	if err := os.WriteFile(report, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stderr, changed := appendStdout(t, dir, report, "restore", "--json", "a.zip", "elsewhere"); code != exitComplete || !changed {
		t.Errorf("restore --json >> report.json: exit %d, stderr %q, written %v; want 0 and the report", code, stderr, changed)
	}
}
