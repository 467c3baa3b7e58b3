package main

// The local copy of a bucket set's last archive (--cache-dir): a run into an s3:// set keeps
// the archive it uploaded, byte for byte, so that the next run copies the entries of
// unchanged files from it as a folder set's run copies them from LATEST's archive. The copy
// is trusted only when its size and SHA-256 are those LATEST's receipt in the bucket
// records; anything else (no copy, another archive, damaged bytes) is a full run, said in
// one line.

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"backup/atomicfile"
	"backup/backupset"
	"backup/backupset/s3store"
	"backup/eintr"
	"backup/format"
)

// setCache is the folder one set's copy lives in.
type setCache struct {
	root string // the cache folder: --cache-dir, else $XDG_CACHE_HOME/backup or ~/.cache/backup
	dir  string // root/s3/KEY: this set's folder in it
}

// cacheTag marks the cache folder for the tools that skip caches (backup --exclude-caches,
// tar --exclude-caches, restic, borg): see https://bford.info/cachedir/.
const cacheTag = "Signature: 8a477f597d28d172789f06886806bc55\n" +
	"# This file is a cache directory tag created by backup (copies of archives of backup sets in buckets).\n" +
	"# For information about cache directory tags, see https://bford.info/cachedir/\n"

// defaultCacheRoot is the cache folder without --cache-dir: $XDG_CACHE_HOME/backup, else
// ~/.cache/backup.
func defaultCacheRoot() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "backup"), nil
}

// newSetCache is the cache of the set at loc on the server endpoint ("" for the AWS
// configuration's) under root. The set's folder is named by a hash of both: a prefix may be
// longer than a file name may be, and two servers may hold the same bucket name.
func newSetCache(root, endpoint, loc string) *setCache {
	if endpoint == "" {
		endpoint = s3store.EnvEndpoint()
	}
	sum := sha256.Sum256([]byte(endpoint + "\n" + loc))
	return &setCache{root: root, dir: filepath.Join(root, "s3", hex.EncodeToString(sum[:16]))}
}

// prepare creates the cache folder (0700, tagged) and the set's folder in it. The folders
// below the cache folder must be this user's own, real folders: in a cache folder others
// may write to (--cache-dir /tmp/c), a planted symlink s3/KEY would have the run write its
// copy, and remove files named like archives, in a folder of the attacker's choosing. The
// run reaches them by path long after this check, so no other user may move them either:
// see atomicfile.FixedPath.
func (c *setCache) prepare() error {
	if err := makeFixed(c.root); err != nil {
		return err
	}
	tag := filepath.Join(c.root, "CACHEDIR.TAG")
	if _, err := os.Lstat(tag); errors.Is(err, fs.ErrNotExist) {
		if err := atomicfile.WriteFile(tag, []byte(cacheTag), 0o644); err != nil {
			return err
		}
	}
	for _, dir := range []string{filepath.Dir(c.dir), c.dir} {
		if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		if err := ownFolder(dir); err != nil {
			return err
		}
	}
	return nil
}

// makeFixed makes the cache folder dir (0700) where missing, once the folder it is made in
// passes atomicfile.FixedPath, then checks dir itself. Made first, the folders of root run by sudo
// keeping HOME=/home/alice were root's in alice's home (her ~/.cache no longer hers to
// write) before the check refused them.
func makeFixed(dir string) error {
	existing := dir
	for {
		if _, err := os.Lstat(existing); err == nil || existing == filepath.Dir(existing) {
			break
		}
		existing = filepath.Dir(existing)
	}
	if err := atomicfile.FixedPath(existing); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return atomicfile.FixedPath(dir)
}

// ownFolder says why dir is not a real folder of this user's that only they may write to.
func ownFolder(dir string) error {
	info, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	switch {
	case !info.IsDir():
		return fmt.Errorf("%s is %s, not a folder", dir, atomicfile.DescribeType(info.Mode()))
	case ok && int(st.Uid) != os.Geteuid():
		return fmt.Errorf("%s is not this user's folder (owner uid %d)", dir, st.Uid)
	case info.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("%s may be written by others (mode %v)", dir, info.Mode().Perm())
	}
	return nil
}

// find returns the path of the copy of the archive name, or why there is none: no copy,
// or a copy of another archive (LATEST moved elsewhere: another host's run, activate).
func (c *setCache) find(name string) (string, error) {
	path := filepath.Join(c.dir, name)
	info, err := os.Lstat(path)
	switch {
	case err == nil && info.Mode().IsRegular():
		return path, nil
	case err == nil:
		return "", fmt.Errorf("the local copy %s is %s", path, atomicfile.DescribeType(info.Mode()))
	}
	if others := c.archives(""); len(others) > 0 {
		return "", fmt.Errorf("the local copy in %s is of %s, not of LATEST's archive %s", c.dir, others[0], name)
	}
	return "", fmt.Errorf("no local copy of LATEST's archive %s in %s", name, c.dir)
}

// archives are the names of the set's archives and temp files in the set's folder, but keep:
// what a new copy replaces. Other files are not the cache's and stay.
func (c *setCache) archives(keep string) []string {
	entries, err := os.ReadDir(c.dir)
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		temp := strings.HasPrefix(n, ".") && strings.Contains(n, atomicfile.TempInfix)
		// IsArchiveName, not SourceOf: an encrypted archive's name holds no source.
		if n != keep && e.Type().IsRegular() && (temp || backupset.IsArchiveName(n)) {
			names = append(names, n)
		}
	}
	return names
}

// cacheWriter writes the copy of an archive as it is uploaded, to a temp file in the set's
// folder. It never fails the upload: a write that fails (a full disk) drops the copy, and
// the run says so once, at its end.
type cacheWriter struct {
	c    *setCache
	f    *os.File
	sum  hash.Hash
	size int64
	err  error // why the copy was dropped
}

// create starts the copy of the archive name.
func (c *setCache) create(name string) *cacheWriter {
	w := &cacheWriter{c: c, sum: sha256.New()}
	w.f, w.err = atomicfile.CreateTemp(c.dir, name) // mode 0600
	return w
}

func (w *cacheWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return len(p), nil
	}
	n, err := w.f.Write(p)
	w.sum.Write(p[:n])
	w.size += int64(n)
	if err != nil {
		w.drop(err)
	}
	return len(p), nil
}

// drop removes the temp file, and keeps why.
func (w *cacheWriter) drop(err error) {
	if w.err == nil {
		w.err = err
	}
	if w.f != nil {
		w.f.Close()
		eintr.Remove(w.f.Name())
		w.f = nil
	}
}

// keep puts the copy in place as the set's one archive, once it is the archive the receipt
// describes (want), and removes the copy it replaces.
func (w *cacheWriter) keep(name string, want format.Summary) error {
	if w.err != nil {
		return w.err
	}
	got := format.Summary{Size: w.size, SHA256: hex.EncodeToString(w.sum.Sum(nil))}
	err := want.Match(got)
	if err == nil {
		err = w.f.Sync()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = atomicfile.Publish(&atomicfile.Staged{Temp: w.f.Name(), Final: filepath.Join(w.c.dir, name)})
	}
	if err != nil {
		eintr.Remove(w.f.Name())
		w.f = nil
		return err
	}
	w.f = nil
	for _, old := range w.c.archives(name) {
		eintr.Remove(filepath.Join(w.c.dir, old))
	}
	return nil
}

// teeStream hands what the engine writes to the upload and to the local copy; only the
// upload's errors are the run's.
type teeStream struct {
	up   io.Writer
	copy *cacheWriter
}

func (t teeStream) Write(p []byte) (int, error) {
	n, err := t.up.Write(p)
	t.copy.Write(p[:n])
	return n, err
}
