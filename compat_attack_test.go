package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The archives in testdata/compat were written by released versions of backup, each the
// first run of a set of the tree compatTree makes (app/a.txt "hello\n", app/sub/b.txt
// "b\n"), as root:
//
//	app-20261205T220822Z.zip  manifest v1, by 13721b1: backup create app --output-dir set
//	app-20261205T220829Z.zip  manifest v2 before reuse (no ctime_ns, no compression), by
//	                          8b8f3f8: the same command
//
// (git worktree add /tmp/wt COMMIT && cd /tmp/wt && go build -o /tmp/old . ; each receipt
// beside its archive is the one that run wrote).
var compatArchives = []struct{ name, made string }{
	{"app-20261205T220822Z.zip", "manifest v1"},
	{"app-20261205T220829Z.zip", "manifest v2 without what reuse compares"},
}

func compatTree(t *testing.T, dir string) {
	t.Helper()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "hello\n"}, "sub/b.txt": {content: "b\n"}})
}

// compatSet makes a set in dir/set whose LATEST is the archive name of testdata/compat, as
// the version that wrote it left it, and returns the set's folder.
func compatSet(t *testing.T, dir, name string) string {
	t.Helper()
	set := filepath.Join(dir, "set")
	if err := os.Mkdir(set, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{name, name + ".receipt.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", "compat", n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(set, n), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(set, "LATEST"), []byte(name+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return set
}

// TestAttackCompatOldReferenceSaysFullRun: after an upgrade, the first run of a set whose
// LATEST an older version wrote (manifest v1, or v2 from before reuse) copies nothing from
// it, which is safe, but must say why in one line, as for any reference it reads every file
// beside: a user who upgraded sees a full run and no reason.
func TestAttackCompatOldReferenceSaysFullRun(t *testing.T) {
	t.Parallel()
	for _, tt := range compatArchives {
		t.Run(tt.made, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			compatTree(t, dir)
			set := compatSet(t, dir, tt.name)
			r := backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app")
			mustExit(t, r, exitComplete)
			want := "backup: reading every file: no unchanged entry is copied: " + filepath.Join(set, tt.name) + ": "
			if n := strings.Count(r.stderr, "reading every file"); n != 1 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "older version") {
				t.Errorf("stderr:\n%s\nwant one line starting %q that says an older version wrote it", r.stderr, want)
			}
			latest := filepath.Join(set, readLatest(t, set))
			if got := reusedIn(t, latest); got != 0 {
				t.Errorf("%d reused from a reference that records nothing reuse compares", got)
			}
			mustExit(t, backup(t, runOpts{dir: dir}, "verify", set), exitComplete)

			// -q says nothing of it: the run is whole, and nothing is damaged.
			r = backup(t, runOpts{dir: dir}, "create", "-q", "--reference", filepath.Join(set, tt.name), "-o", filepath.Join(dir, "q.zip"), "app")
			mustExit(t, r, exitComplete)
			if r.stderr != "" {
				t.Errorf("-q printed %q", r.stderr)
			}
		})
	}
}
