package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backup/format"
)

// cacheFiles lists the files in the cache folders of the sets below root (root/s3/KEY/…).
func cacheFiles(t *testing.T, root string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(root, "s3", "*", "*"))
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// s3Run runs create into the set s with args, in dir, on the tree app.
func s3Run(t *testing.T, s s3Set, dir string, args ...string) (result, string) {
	t.Helper()
	r := backup(t, runOpts{dir: dir, env: s.env}, append(append([]string{"create", "--output-dir", s.loc}, args...), "app")...)
	return r, filepath.Join(s.dir, readLatest(t, s.dir))
}

// TestS3CacheReuse: a run into a set in a bucket keeps a copy of the archive it uploaded
// (one per set, mode 0600, in a tagged folder of mode 0700 under $XDG_CACHE_HOME/backup), and
// the next run copies the unchanged files' entries from it; its archive is byte for byte a
// --reread run's. Before, every run into a bucket read every file.
func TestS3CacheReuse(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	reuseTree(t, dir)
	root := filepath.Join(s.srv.CacheHome, "backup")
	r, first := s3Run(t, s, dir, "-q")
	mustExit(t, r, exitComplete)
	copies := cacheFiles(t, root)
	if len(copies) != 1 || filepath.Base(copies[0]) != filepath.Base(first) || !sameBytes(t, copies[0], first) {
		t.Fatalf("cache after the first run: %q; want a copy of %s", copies, first)
	}
	for path, want := range map[string]os.FileMode{copies[0]: 0o600, filepath.Dir(copies[0]): 0o700 | os.ModeDir, root: 0o700 | os.ModeDir} {
		if info, err := os.Stat(path); err != nil || info.Mode() != want {
			t.Errorf("%s: %v, %v; want mode %v", path, info.Mode(), err, want)
		}
	}
	if data, err := os.ReadFile(filepath.Join(root, "CACHEDIR.TAG")); err != nil || !strings.HasPrefix(string(data), "Signature: 8a477f597d28d172789f06886806bc55") {
		t.Errorf("CACHEDIR.TAG: %q, %v", data, err)
	}

	if err := os.WriteFile(filepath.Join(dir, "app", "b.txt"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, second := s3Run(t, s, dir)
	mustExit(t, r, exitComplete)
	if rc := readReceipt(t, second+format.ReceiptSuffix); rc.Counts.Reused != 4 || strings.Contains(r.stderr, "reading every file") {
		t.Errorf("second run: counts %+v, stderr %q; want the 4 unchanged files reused", rc.Counts, r.stderr)
	}
	r, reread := s3Run(t, s, dir, "-q", "--reread")
	mustExit(t, r, exitComplete)
	if !sameBytes(t, second, reread) {
		t.Errorf("%s and %s differ: a run reusing from the local copy must write what a full run writes", second, reread)
	}
	unzipTest(t, second)
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "verify", s.loc), exitComplete)
	if copies := cacheFiles(t, root); len(copies) != 1 || filepath.Base(copies[0]) != filepath.Base(reread) {
		t.Errorf("cache after the --reread run: %q; want only the copy of %s, replaced by the run", copies, reread)
	}
}

// TestS3CacheUntrusted: a copy that is missing, of another archive (LATEST moved by
// activate), or damaged (one byte) is never reused from: the run reads every file, says why
// in one line, completes, and leaves a copy of its own archive for the next run.
func TestS3CacheUntrusted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		spoil func(t *testing.T, s s3Set, dir, copy string)
		want  string
	}{
		{"missing", func(t *testing.T, _ s3Set, _, copy string) { os.Remove(copy) }, "no local copy of LATEST's archive"},
		{"another archive", func(t *testing.T, s s3Set, dir, _ string) {
			first := setArchives(t, s.dir)[0]
			mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "activate", s.loc, first), exitComplete)
		}, "is of app-"},
		{"damaged", func(t *testing.T, _ s3Set, _, copy string) { flipEntryByte(t, copy, "app/sub/big.log") }, "its SHA-256 is not the one its receipt records"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newS3Set(t)
			dir := t.TempDir()
			reuseTree(t, dir)
			root := filepath.Join(s.srv.CacheHome, "backup")
			for range 2 {
				r, _ := s3Run(t, s, dir, "-q")
				mustExit(t, r, exitComplete)
			}
			tt.spoil(t, s, dir, cacheFiles(t, root)[0])
			r, latest := s3Run(t, s, dir)
			mustExit(t, r, exitComplete)
			if n := strings.Count(r.stderr, "reading every file"); n != 1 || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("stderr:\n%s\nwant one line saying every file is read, and %q", r.stderr, tt.want)
			}
			if got := reusedIn(t, latest); got != 0 {
				t.Errorf("%d files reused from an untrusted copy", got)
			}
			mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "verify", s.loc), exitComplete)
			if copies := cacheFiles(t, root); len(copies) != 1 || !sameBytes(t, copies[0], latest) {
				t.Errorf("cache after the full run: %q; want a copy of %s", copies, latest)
			}
			r, next := s3Run(t, s, dir, "-q")
			mustExit(t, r, exitComplete)
			if got := reusedIn(t, next); got != 5 {
				t.Errorf("the run after: %d reused, want 5", got)
			}
		})
	}
}

// TestS3CacheFlags: --no-cache keeps no copy and says nothing; --cache-dir puts the copy
// there; a cache folder inside a SOURCE is left out of the archive (rule self); a SOURCE
// inside the cache folder, an empty --cache-dir, both flags, or either with a folder set are
// usage errors; a cache folder that cannot be made costs the reuse, said in one line, never
// the backup; a dry run writes no copy.
func TestS3CacheFlags(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	reuseTree(t, dir)
	home := filepath.Join(s.srv.CacheHome, "backup")
	run := func(args ...string) result {
		return backup(t, runOpts{dir: dir, env: s.env}, append(append([]string{"create", "-q", "--output-dir", s.loc}, args...), "app")...)
	}
	mustExit(t, run("--no-cache"), exitComplete)
	r := run("--no-cache")
	mustExit(t, r, exitComplete)
	if _, err := os.Stat(home); err == nil || r.stderr != "" || reusedIn(t, filepath.Join(s.dir, readLatest(t, s.dir))) != 0 {
		t.Errorf("--no-cache: the cache folder exists (%v) or stderr %q", err, r.stderr)
	}
	mustExit(t, run("--dry-run"), exitComplete)
	if _, err := os.Stat(home); err == nil {
		t.Error("a dry run made the cache folder")
	}

	inside := filepath.Join(dir, "app", "cache")
	mustExit(t, run("--cache-dir", inside), exitComplete)
	mustExit(t, run("--cache-dir", inside), exitComplete)
	latest := filepath.Join(s.dir, readLatest(t, s.dir))
	rc := readReceipt(t, latest+format.ReceiptSuffix)
	if rc.Counts.Reused != 5 || len(rc.Excluded) != 1 || rc.Excluded[0].Rule != "self" || rc.Excluded[0].Path != "app/cache" {
		t.Errorf("a cache inside the SOURCE: reused %d, excluded %+v; want 5 reused and the cache excluded (self)", rc.Counts.Reused, rc.Excluded)
	}
	if len(cacheFiles(t, inside)) != 1 {
		t.Errorf("--cache-dir %s holds %q", inside, cacheFiles(t, inside))
	}

	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r = backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "--cache-dir", file, "app")
	if r.code != exitComplete || strings.Count(r.stderr, "reading every file") != 1 || !strings.Contains(r.stderr, "cache folder "+file) {
		t.Errorf("a cache folder that is a file: exit %d, stderr %q; want 0 and one line", r.code, r.stderr)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--cache-dir", filepath.Join(dir, "app", "..")}, "SOURCE " + filepath.Join(dir, "app") + " is inside the cache folder"},
		{[]string{"--cache-dir", ""}, "--cache-dir"},
		{[]string{"--cache-dir", inside, "--no-cache"}, "choose one"},
	} {
		r := run(c.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", c.args, r.code, r.stderr, c.want)
		}
	}
	for _, flag := range []string{"--no-cache", "--cache-dir=" + inside} {
		r := backup(t, runOpts{dir: dir}, "create", "--output-dir", filepath.Join(dir, "set"), flag, "app")
		if r.code != exitUsage || !strings.Contains(r.stderr, "need a backup set in a bucket") {
			t.Errorf("%s with a folder set: exit %d, stderr %q; want 2", flag, r.code, r.stderr)
		}
	}
}

// TestS3CacheDefaultHome: without XDG_CACHE_HOME the copy goes to ~/.cache/backup.
func TestS3CacheDefaultHome(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	reuseTree(t, dir)
	home := t.TempDir()
	env := append(s.env, "XDG_CACHE_HOME=", "HOME="+home)
	mustExit(t, backup(t, runOpts{dir: dir, env: env}, "create", "-q", "--output-dir", s.loc, "app"), exitComplete)
	if got := cacheFiles(t, filepath.Join(home, ".cache", "backup")); len(got) != 1 {
		t.Errorf("~/.cache/backup holds %q, want one copy", got)
	}
}

// TestS3CachePlantedFolder: in a cache folder others may write to, a set's folder planted as
// a symlink (or one of another user, or writable by others) is not used: the run reads every
// file, says why in one line, completes, and writes and removes nothing through it.
func TestS3CachePlantedFolder(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	reuseTree(t, dir)
	shared := filepath.Join(t.TempDir(), "shared")
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "-q", "--output-dir", s.loc, "--cache-dir", shared, "app"), exitComplete)
	copies := cacheFiles(t, shared)
	if len(copies) != 1 {
		t.Fatalf("cache: %q", copies)
	}
	victim := t.TempDir()
	kept := filepath.Join(victim, "app-20200101T000000Z.zip")
	if err := os.WriteFile(kept, []byte("the victim's"), 0o644); err != nil {
		t.Fatal(err)
	}
	setDir := filepath.Dir(copies[0])
	if err := os.RemoveAll(setDir); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, setDir); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "--cache-dir", shared, "app")
	if r.code != exitComplete || strings.Count(r.stderr, "reading every file") != 1 || !strings.Contains(r.stderr, "is a symlink, not a folder") {
		t.Errorf("exit %d, stderr %q; want 0 and one line naming the symlink", r.code, r.stderr)
	}
	if got := listDir(t, victim); len(got) != 1 || got[0] != filepath.Base(kept) {
		t.Errorf("the folder the symlink leads to holds %q, want only the victim's file", got)
	}
	if err := os.Remove(setDir); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(setDir, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(setDir, 0o777)
	r = backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "--cache-dir", shared, "app")
	if r.code != exitComplete || !strings.Contains(r.stderr, "may be written by others") {
		t.Errorf("a set folder writable by all: exit %d, stderr %q", r.code, r.stderr)
	}
}
