package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backup/backupset"
)

// adoptSet makes a set with one backup of app, and an archive of a changed app made
// elsewhere with -o, with its receipt beside it.
func adoptSet(t *testing.T) (dir, set, first, elsewhere string) {
	t.Helper()
	dir = t.TempDir()
	set = filepath.Join(dir, "set")
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app"), exitComplete)
	first = readLatest(t, set)
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"b": {content: "made on another host\n"}})
	elsewhere = filepath.Join(dir, "host2", "app.zip")
	os.Mkdir(filepath.Dir(elsewhere), 0o755)
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-o", elsewhere, "app"), exitComplete)
	return dir, set, first, elsewhere
}

// TestAdopt brings an archive made elsewhere into a set: copied (the original stays, byte
// for byte) under its default name with a receipt that names the copy, seen by status,
// LATEST unchanged; adopting it again changes nothing; --activate then moves LATEST.
func TestAdopt(t *testing.T) {
	t.Parallel()
	mustTool(t, "unzip")
	_, set, first, elsewhere := adoptSet(t)
	original, err := os.ReadFile(elsewhere)
	if err != nil {
		t.Fatal(err)
	}
	rc := readReceipt(t, elsewhere+".receipt.json")
	name := backupset.ArchiveName("app", rc.StartedAt, 1)
	if name == first {
		name = backupset.ArchiveName("app", rc.StartedAt, 2)
	}

	r := backup(t, runOpts{}, "adopt", set, elsewhere)
	mustExit(t, r, exitComplete)
	copied, err := os.ReadFile(filepath.Join(set, name))
	if err != nil || !bytes.Equal(copied, original) {
		t.Fatalf("the set's %s: %v, equal to the original: %v; stdout %q", name, err, bytes.Equal(copied, original), r.stdout)
	}
	if after, err := os.ReadFile(elsewhere); err != nil || !bytes.Equal(after, original) {
		t.Errorf("the original was moved or changed: %v", err)
	}
	for _, f := range []string{name, name + ".receipt.json"} {
		info, err := os.Stat(filepath.Join(set, f))
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != 0o600 {
			t.Errorf("the set's %s has mode %v, want 0600 as create writes", f, info.Mode())
		}
	}
	if got := readReceipt(t, filepath.Join(set, name+".receipt.json")); got.Archive.Path != filepath.Join(set, name) || got.Archive.SHA256 != rc.Archive.SHA256 {
		t.Errorf("the set's receipt records %+v, want the copy's path and the original's SHA-256", got.Archive)
	}
	unzipTest(t, filepath.Join(set, name))
	if got := readLatest(t, set); got != first {
		t.Errorf("adopt moved LATEST to %q", got)
	}
	r = backup(t, runOpts{}, "status", set)
	mustExit(t, r, exitComplete)
	if !strings.Contains(r.stdout, name) {
		t.Errorf("status does not list %s:\n%s", name, r.stdout)
	}

	before := statDir(t, set)
	r = backup(t, runOpts{}, "adopt", set, elsewhere)
	mustExit(t, r, exitComplete)
	if !strings.Contains(r.stdout, "already in the set as "+name) {
		t.Errorf("second adopt says %q, want that it is already in the set", r.stdout)
	}
	if after := statDir(t, set); after != before {
		t.Errorf("the second adopt changed the set:\n%s\nwant\n%s", after, before)
	}

	mustExit(t, backup(t, runOpts{}, "adopt", "--activate", set, elsewhere), exitComplete)
	if got := readLatest(t, set); got != name {
		t.Errorf("adopt --activate left LATEST on %q, want %q", got, name)
	}
}

// statDir describes every file of dir but the lock file (whose holder writes its pid) by
// name, size and modification time.
func statDir(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	for _, name := range listDir(t, dir) {
		if name == backupset.LockName {
			continue
		}
		info, err := os.Lstat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %d %s\n", name, info.Size(), info.ModTime())
	}
	return b.String()
}

// TestAdoptRefused: adopt writes nothing into the set (exit 1) for an archive whose receipt
// is another file's, one of another source, and one without a receipt.
func TestAdoptRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args func(t *testing.T, dir, elsewhere string) []string
		want string
	}{
		{"receipt of another file", func(t *testing.T, dir, elsewhere string) []string {
			makeTree(t, filepath.Join(dir, "app"), map[string]node{"c": {content: "c\n"}})
			other := filepath.Join(dir, "host2", "other.zip")
			mustExit(t, backup(t, runOpts{dir: dir}, "create", "-o", other, "app"), exitComplete)
			return []string{elsewhere, "--receipt", other + ".receipt.json"}
		}, "does not verify against receipt"},
		{"another source", func(t *testing.T, dir, elsewhere string) []string {
			makeTree(t, filepath.Join(dir, "db"), map[string]node{"d": {content: "d\n"}})
			db := filepath.Join(dir, "host2", "db.zip")
			mustExit(t, backup(t, runOpts{dir: dir}, "create", "-o", db, "db"), exitComplete)
			return []string{db}
		}, `the archive holds "db"`},
		{"no receipt", func(t *testing.T, dir, elsewhere string) []string {
			os.Remove(elsewhere + ".receipt.json")
			return []string{elsewhere}
		}, "give it with --receipt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir, set, _, elsewhere := adoptSet(t)
			args := tt.args(t, dir, elsewhere)
			before := statDir(t, set)
			r := backup(t, runOpts{}, append([]string{"adopt", set}, args...)...)
			mustExit(t, r, exitFailed)
			if !strings.Contains(r.stderr, tt.want) || strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("stderr %q, want one line with %q", r.stderr, tt.want)
			}
			if after := statDir(t, set); after != before {
				t.Errorf("the refused adopt changed the set:\n%s\nwant\n%s", after, before)
			}
		})
	}
}

// TestAdoptKilled kills adopt (SIGKILL) while it writes the receipt, and while the copy of
// the archive is about to be linked into place: the set stays healthy with LATEST on its
// old archive and no partial archive at a final name, and adopting again completes the copy
// under the same name and clears the temp files.
func TestAdoptKilled(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	tests := []struct {
		call  string // the syscall held
		temp  string // the temp file that shows adopt is there
		files int    // archives and receipts in the set after the kill
	}{
		{"renameat2", ".app-*.receipt.json.tmp-*", 2},
		{"linkat", ".app-*.zip.tmp-*", 3}, // the receipt is in, the archive not yet
	}
	for _, tt := range tests {
		t.Run(tt.call, func(t *testing.T) {
			t.Parallel()
			_, set, first, elsewhere := adoptSet(t)
			cmd := straced(t, tt.call, "delay_enter", "adopt", set, elsewhere)
			waitFor(t, "the adoption's temp file", func() bool {
				temps, _ := filepath.Glob(filepath.Join(set, tt.temp))
				return len(temps) > 0
			})
			killGroup(cmd)
			if got := readLatest(t, set); got != first {
				t.Errorf("after the kill LATEST names %q, want %q", got, first)
			}
			mustExit(t, backup(t, runOpts{}, "status", set), exitComplete)
			if archives := setArchives(t, set); len(archives) != tt.files {
				t.Errorf("after the kill the set holds %v, want %d files (no archive before its copy is whole)", archives, tt.files)
			}
			mustExit(t, backup(t, runOpts{}, "adopt", "--wait", "30s", set, elsewhere), exitComplete)
			if temps, _ := filepath.Glob(filepath.Join(set, ".*.tmp-*")); len(temps) > 0 {
				t.Errorf("temp files left after the next adopt: %v", temps)
			}
			if archives := setArchives(t, set); len(archives) != 4 {
				t.Errorf("after adopting again the set holds %v, want the first backup and the adopted one", archives)
			}
			mustExit(t, backup(t, runOpts{}, "verify", filepath.Join(set, setArchives(t, set)[2])), exitComplete)
		})
	}
}
