package main

import (
	"archive/zip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"backup/format"
)

// The archives in testdata/compat were written by released versions of backup, each the
// first run of a set of the tree compatTree makes (app/a.txt "hello\n", app/sub/b.txt
// "b\n"), as root:
//
//	app-20261205T220822Z.zip  manifest v1, by 13721b1: backup create app --output-dir set
//	app-20261205T220829Z.zip  manifest v2 before reuse (no ctime_ns, no compression), by
//	                          8b8f3f8: the same command
//	app-20261206T043927Z.zip  manifest v2 with what reuse compares and each file's
//	                          raw_sha256 (of 2026-12-01, before v3), by b9bbcaf: the same
//	                          command
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

// TestAttackCompatV1RestoreKeepsPresentTree: a manifest v1 records no fraction of a second
// (mtime_nsec came with v2), so the archive's whole seconds are all it knows of an mtime. A
// restore of such an archive into the tree it was made of, whose files hold its bytes and
// mode and an mtime in its very second, must find them there and change nothing: it set
// every mtime's fraction to 0, and with --force replaced each file that has another name
// (its hard link split off, which the undo leaves split), as though it differed.
func TestAttackCompatV1RestoreKeepsPresentTree(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	archivePath, err := filepath.Abs(filepath.Join("testdata", "compat", compatArchives[0].name))
	if err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(dir, "dest")
	compatTree(t, dest)
	zr, err := zip.OpenReader(archivePath)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	mtimes := map[string]time.Time{}
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, "/") || f.Name == ".backup-manifest.json" {
			continue
		}
		// The file's mtime: the archive's second, and a fraction the archive does not record.
		mtime := f.Modified.Add(400 * time.Millisecond)
		p := filepath.Join(dest, filepath.FromSlash(f.Name))
		if err := os.Chmod(p, f.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		mtimes[f.Name] = mtime
	}
	if len(mtimes) != 2 {
		t.Fatalf("fixture holds files %v, want app/a.txt and app/sub/b.txt", mtimes)
	}
	// app/a.txt has a second name, outside what the archive holds.
	if err := os.Link(filepath.Join(dest, "app", "a.txt"), filepath.Join(dest, "other-name")); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir}, "restore", "--force", "--undo-dir", dir, archivePath, dest)
	mustExit(t, r, exitComplete)
	if !strings.Contains(r.stderr, "2 files already there") || strings.Contains(r.stderr, "warning") {
		t.Errorf("stderr:\n%s\nwant both files already there, no warning", r.stderr)
	}
	for name, want := range mtimes {
		info, err := os.Stat(filepath.Join(dest, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		if !info.ModTime().Equal(want) {
			t.Errorf("%s: mtime %v after the restore, want %v as it was (the archive records its second only)", name, info.ModTime(), want)
		}
	}
	a, errA := os.Stat(filepath.Join(dest, "app", "a.txt"))
	o, errO := os.Stat(filepath.Join(dest, "other-name"))
	if errA != nil || errO != nil || !os.SameFile(a, o) {
		t.Errorf("app/a.txt is no longer the file other-name names (%v, %v): a file already there was replaced", errA, errO)
	}
}

// TestCompatV2ReferenceReused: a set whose LATEST backup of 2026-12-01 wrote (manifest v2
// with ctime_ns, ino and compression, and each file's raw_sha256, which v3 no longer writes)
// is reused from by the first run after an upgrade, as docs/formats.md and reuse.md say: v2
// records what reuse compares, and raw_sha256 is read and ignored (the receipt's SHA-256
// proves the reference). The tree is the fixture's, with its recorded mtimes and modes;
// --ignore-inode leaves out the inode and change time, which no checked-in file can keep.
func TestCompatV2ReferenceReused(t *testing.T) {
	t.Parallel()
	const name = "app-20261206T043927Z.zip"
	dir := t.TempDir()
	compatTree(t, dir)
	set := compatSet(t, dir, name)
	zr, err := zip.OpenReader(filepath.Join(set, name))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Files []struct {
			Path      string `json:"path"`
			MtimeNsec int64  `json:"mtime_nsec"`
			RawSHA256 string `json:"raw_sha256"`
		} `json:"files"`
	}
	if err := json.Unmarshal([]byte(readZipGo(t, filepath.Join(set, name))[format.ManifestName]), &m); err != nil {
		t.Fatal(err)
	}
	nsec := map[string]int64{}
	for _, f := range m.Files {
		if f.RawSHA256 == "" {
			t.Fatalf("fixture: %s has no raw_sha256", f.Path)
		}
		nsec[f.Path] = f.MtimeNsec
	}
	for _, f := range zr.File {
		n, ok := nsec[f.Name]
		if !ok {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		mtime := f.Modified.Add(time.Duration(n))
		if err := os.Chmod(p, f.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	zr.Close()
	if len(nsec) != 2 {
		t.Fatalf("fixture holds files %v, want app/a.txt and app/sub/b.txt", nsec)
	}
	r := backup(t, runOpts{dir: dir}, "create", "--ignore-inode", "--output-dir", set, "app")
	mustExit(t, r, exitComplete)
	if strings.Contains(r.stderr, "reading every file") {
		t.Errorf("stderr:\n%s\nwant no full run: a v2 manifest with compression records what reuse compares", r.stderr)
	}
	latest := filepath.Join(set, readLatest(t, set))
	if got := reusedIn(t, latest); got != 2 {
		t.Errorf("%d files reused from the v2 reference, want 2", got)
	}
	if got := readZipGo(t, latest)[format.ManifestName]; !strings.Contains(got, `"backup.manifest/v3"`) || strings.Contains(got, "raw_sha256") {
		t.Errorf("the new run's manifest:\n%s\nwant v3, without raw_sha256", got)
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "verify", set), exitComplete)
}
