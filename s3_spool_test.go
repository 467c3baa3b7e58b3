package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"backup/archive"
	"backup/backupset"
)

// spoolFixture is a set in a bucket whose LATEST archive holds files of small entries, more
// than the 8 blocks of 1 MiB an opened archive keeps in memory, and a proxy to the server
// that counts the bytes it sends.
type spoolFixture struct {
	s     s3Set
	dir   string
	size  int64 // of the archive
	files map[string]node
	proxy string
	sent  *atomic.Int64
}

func newSpoolFixture(t *testing.T) spoolFixture {
	t.Helper()
	f := spoolFixture{s: newS3Set(t), dir: t.TempDir(), files: map[string]node{}, sent: new(atomic.Int64)}
	// 1,500 files of 8 KiB that do not compress: a 12 MB archive.
	for i := range 1500 {
		b := make([]byte, 8<<10)
		randReader{}.Read(b)
		f.files[fmt.Sprintf("d%02d/f%04d.bin", i/100, i)] = node{content: string(b)}
	}
	makeTree(t, filepath.Join(f.dir, "app"), f.files)
	mustExit(t, backup(t, runOpts{dir: f.dir, env: f.s.env}, "create", "-q", "--output-dir", f.s.loc, "app"), exitComplete)
	st, err := os.Stat(filepath.Join(f.s.dir, readLatest(t, f.s.dir)))
	if err != nil {
		t.Fatal(err)
	}
	f.size = st.Size()
	f.proxy = countingProxy(t, f.s.srv.Endpoint, f.sent)
	return f
}

// run runs backup through the proxy with XDG_CACHE_HOME set to cache, and returns the bytes
// the server sent.
func (f spoolFixture) run(t *testing.T, cache string, args ...string) int64 {
	t.Helper()
	f.sent.Store(0)
	env := append(f.s.env, "XDG_CACHE_HOME="+cache)
	mustExit(t, backup(t, runOpts{dir: f.dir, env: env}, append([]string{args[0], "--s3-endpoint", f.proxy}, args[1:]...)...), exitComplete)
	return f.sent.Load()
}

// restored checks that dest holds every file of the fixture as it was.
func (f spoolFixture) restored(t *testing.T, dest string) {
	t.Helper()
	for name, n := range f.files {
		if got, err := os.ReadFile(filepath.Join(dest, "app", name)); err != nil || !bytes.Equal(got, []byte(n.content)) {
			t.Fatalf("%s: restored %d bytes (%v), want its %d", name, len(got), err, len(n.content))
		}
	}
}

// TestS3WholeReadsFetchOnce: restore and verify of a whole archive of small files in a
// bucket fetch it once (and a block or two more, read as it is opened), counted through a
// proxy. Restore checks every local header before it writes anything, and reads the data
// after; with only the blocks kept in memory it fetched such an archive twice (83.7 MB of a
// 38.6 MB archive), and verify 1.3 to 2.6 times. What is fetched once is kept in a spool
// with no name in the cache folder: nothing of it is left there.
func TestS3WholeReadsFetchOnce(t *testing.T) {
	t.Parallel()
	f := newSpoolFixture(t)
	cache := filepath.Join(f.dir, "cache")
	for _, args := range [][]string{
		{"restore", f.s.loc, filepath.Join(f.dir, "r")},
		{"restore", "--jobs", "1", f.s.loc, filepath.Join(f.dir, "r1")},
		{"verify", f.s.loc},
	} {
		if got := f.run(t, cache, args...); got > f.size+2<<20 { // its opening reads a block or two more
			t.Errorf("%s: fetched %d bytes of a %d-byte archive (%.2f times)", args[:2], got, f.size, float64(got)/float64(f.size))
		}
	}
	f.restored(t, filepath.Join(f.dir, "r"))
	if names, err := os.ReadDir(filepath.Join(cache, "backup")); err != nil && !errors.Is(err, fs.ErrNotExist) || len(names) != 0 {
		t.Errorf("the cache folder holds %v (%v); want nothing left by the reads", names, err)
	}
}

// TestAttackS3SpoolUnusable: a cache folder where no spool can be made (XDG_CACHE_HOME a
// file) or written to the end (a full file system) costs a second fetch of what is read
// twice, never the restore: it completes, with every file as it was.
func TestAttackS3SpoolUnusable(t *testing.T) {
	t.Parallel()
	f := newSpoolFixture(t)
	notDir := filepath.Join(f.dir, "not-a-folder")
	if err := os.WriteFile(notDir, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	full := filepath.Join(f.dir, "full")
	os.Mkdir(full, 0o700)
	mountTmpfs(t, full, "2m") // room for two blocks
	for name, cache := range map[string]string{"a file": notDir, "a full file system": full} {
		dest := filepath.Join(f.dir, "r-"+name)
		got := f.run(t, cache, "restore", f.s.loc, dest)
		f.restored(t, dest)
		if got < f.size {
			t.Errorf("%s: fetched %d bytes of a %d-byte archive", name, got, f.size)
		}
	}
}

// TestAttackS3SpoolKilled: a restore killed (SIGKILL) while its spool holds blocks leaves
// nothing in the cache folder: the spool never had a name.
func TestAttackS3SpoolKilled(t *testing.T) {
	t.Parallel()
	f := newSpoolFixture(t)
	cache := filepath.Join(f.dir, "cache")
	f.sent.Store(0)
	cmd := exec.Command(binary, "restore", "--s3-endpoint", f.proxy, f.s.loc, filepath.Join(f.dir, "r"))
	cmd.Env = append(append(os.Environ(), f.s.env...), "XDG_CACHE_HOME="+cache)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); f.sent.Load() < 4<<20 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if f.sent.Load() < 4<<20 {
		t.Fatalf("the restore was killed after %d bytes, before its spool held 4 blocks", f.sent.Load())
	}
	if names, err := os.ReadDir(filepath.Join(cache, "backup")); err != nil || len(names) != 0 {
		t.Errorf("after a killed restore the cache folder holds %v (%v); want it empty", names, err)
	}
}

// TestAttackS3SpoolStarvesRestore: a spool on the file system the restore writes into
// leaves the restore the room it needs. A 20 MB file system holds the restored files (12 MB)
// but not them and a spool of the 12 MB archive besides: the restore completed without a
// spool and failed with "no space left on device" with one, which filled the disk while
// the plan checked every header (attack pass of this change).
func TestAttackS3SpoolStarvesRestore(t *testing.T) {
	t.Parallel()
	f := newSpoolFixture(t)
	disk := filepath.Join(f.dir, "disk")
	os.Mkdir(disk, 0o700)
	mountTmpfs(t, disk, "20m")
	dest := filepath.Join(disk, "r")
	f.run(t, filepath.Join(disk, "cache"), "restore", f.s.loc, dest)
	f.restored(t, dest)
}

// TestS3ForcedRestoreNoSpool: a restore with --force writes a before-state of what it
// replaces, which the archive does not tell the size of, so it keeps no spool (a forced
// restore that fitted on a disk without one failed with one, attack pass); with --no-undo it
// writes none, and keeps one.
func TestS3ForcedRestoreNoSpool(t *testing.T) {
	t.Parallel()
	f := newSpoolFixture(t)
	cache := filepath.Join(f.dir, "cache")
	if got := f.run(t, cache, "restore", "--force", f.s.loc, filepath.Join(f.dir, "r")); got < f.size*3/2 {
		t.Errorf("restore --force: fetched %d bytes of a %d-byte archive; want it read twice, with no spool", got, f.size)
	}
	if got := f.run(t, cache, "restore", "--force", "--no-undo", f.s.loc, filepath.Join(f.dir, "r1")); got > f.size+2<<20 {
		t.Errorf("restore --force --no-undo: fetched %d bytes of a %d-byte archive; want it read once", got, f.size)
	}
}

// spoolRecorder is a File that records the reserve it is asked to spool with.
type spoolRecorder struct {
	backupset.File
	reserve int64
}

func (s *spoolRecorder) Spool(reserve int64) { s.reserve = reserve }

// TestSpoolReserveSaturates: the reserve is the entries' sizes and the margin, and a hostile
// central directory's sizes (huge, or negative as int64) neither wrap it below what they
// add up to nor lower it.
func TestSpoolReserveSaturates(t *testing.T) {
	for _, tt := range []struct {
		sizes []int64
		want  int64
	}{
		{[]int64{10, 20}, spoolMargin + 30},
		{[]int64{math.MaxInt64, math.MaxInt64, 5}, math.MaxInt64},
		{[]int64{-1, math.MinInt64, 7}, spoolMargin + 7},
	} {
		r := &archive.Reader{}
		for _, n := range tt.sizes {
			r.Entries = append(r.Entries, &archive.Entry{Size: n})
		}
		f := &spoolRecorder{}
		spoolFor(f, r)
		if f.reserve != tt.want {
			t.Errorf("sizes %v: reserve %d, want %d", tt.sizes, f.reserve, tt.want)
		}
	}
}
