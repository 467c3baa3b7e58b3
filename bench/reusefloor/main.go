// Command reusefloor is the benchmark's floor for a reusing set run of an unchanged tree: the
// least such a run must do and stay as trusted, done as fast as this machine allows, with
// nothing else. It reads the reference archive once and takes its SHA-256 (the check against
// its receipt before anything is copied) while it stats every path below TREE (how a run
// tells that a file is unchanged); then it copies the reference's bytes into a new file,
// taking their SHA-256 on a second core (the new archive's, for its receipt), makes the file
// durable and reads it back with a keyed digest (the set's read-back before LATEST moves).
//
//	reusefloor [-v] [-manifests] REFERENCE TREE OUT
//
// It leaves out what a run must also do but that depends on how the archive records files:
// parsing the reference's manifest, deciding per file, writing a new manifest. So it is a
// lower bound: a run can come close to it, never under it. -v prints each phase's wall time.
//
// With -manifests it also does the manifests' work, with backup's format and codec, each
// beside the phase of the run where it falls: the reference's manifest inflated and parsed
// beside the reference's SHA-256, a new manifest (the reference's, encoded again) deflated at
// the run's level beside the copy, and inflated again with its CRC-32 beside the read-back.
// It still decides nothing per file, so a run that writes backup's manifests cannot be
// under it either.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"backup/atomicfile"
	"backup/format"
)

const chunk = 1 << 20

func main() {
	verbose := flag.Bool("v", false, "print each phase's wall time on stderr")
	manifests := flag.Bool("manifests", false, "also read, write and read back the manifests")
	flag.Parse()
	if flag.NArg() != 3 {
		fmt.Fprintln(os.Stderr, "usage: reusefloor [-v] [-manifests] REFERENCE TREE OUT")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), flag.Arg(1), flag.Arg(2), *verbose, *manifests); err != nil {
		fmt.Fprintln(os.Stderr, "reusefloor:", err)
		os.Exit(1)
	}
}

func run(reference, tree, out string, verbose, manifests bool) error {
	start := time.Now()
	phase := func(name string) {
		if verbose {
			fmt.Fprintf(os.Stderr, "%-28s %6.3f s\n", name, time.Since(start).Seconds())
		}
	}
	ref, err := os.Open(reference)
	if err != nil {
		return err
	}
	defer ref.Close()

	walked := make(chan walkResult, 1)
	go func() {
		n, err := statTree(tree)
		walked <- walkResult{n, err}
	}()
	var parsed func() (*format.Manifest, error)
	if manifests {
		parsed = later(func() (*format.Manifest, error) { return readManifest(ref) })
	}
	refHash := sha256.New()
	if _, err := hashAll(ref, refHash); err != nil {
		return err
	}
	refSum := refHash.Sum(nil)
	phase("reference hashed")
	w := <-walked
	if w.err != nil {
		return w.err
	}
	phase(fmt.Sprintf("%d paths stated", w.paths))
	var written func() ([]byte, error)
	if manifests {
		m, err := parsed()
		if err != nil {
			return fmt.Errorf("the reference's manifest: %w", err)
		}
		phase("reference's manifest parsed")
		written = later(func() ([]byte, error) { return writeManifest(m) })
	}
	tmp := out + ".tmp"
	dst, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	defer dst.Close()
	newSum, size, err := copyHashed(dst, ref)
	if err != nil {
		return err
	}
	phase("copied and hashed")
	var checked func() (uint32, error)
	if manifests {
		deflated, err := written()
		if err != nil {
			return fmt.Errorf("write the manifest: %w", err)
		}
		phase("manifest deflated")
		checked = later(func() (uint32, error) { return checkManifest(deflated) })
	}
	if err := dst.Sync(); err != nil {
		return err
	}
	phase("synced")
	key, err := readBack(dst, size)
	if err != nil {
		return err
	}
	if manifests {
		if _, err := checked(); err != nil {
			return err
		}
	}
	phase("read back")
	if err := os.Rename(tmp, out); err != nil {
		return err
	}
	if err := atomicfile.SyncDir(filepath.Dir(out)); err != nil {
		return err
	}
	phase("published")
	fmt.Printf("%d paths, %d bytes, reference %s, copy %s, read back %016x\n", w.paths, size,
		hex.EncodeToString(refSum[:8]), hex.EncodeToString(newSum[:8]), key)
	return nil
}

type walkResult struct {
	paths int
	err   error
}

// statTree stats every name below root relative to its folder's descriptor, as backup's
// walker does, and counts them.
func statTree(root string) (int, error) {
	dir, err := os.Open(root)
	if err != nil {
		return 0, err
	}
	defer dir.Close()
	entries, err := dir.ReadDir(-1)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range entries {
		var st unix.Stat_t
		if err := unix.Fstatat(int(dir.Fd()), e.Name(), &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return n, fmt.Errorf("%s: %w", filepath.Join(root, e.Name()), err)
		}
		n++
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			sub, err := statTree(filepath.Join(root, e.Name()))
			n += sub
			if err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// hashAll reads f from its start to its end in chunks, on this goroutine, into h, and returns
// how many bytes it read.
func hashAll(f *os.File, h io.Writer) (int64, error) {
	buf := make([]byte, chunk)
	var off int64
	for {
		n, err := f.ReadAt(buf, off)
		h.Write(buf[:n])
		off += int64(n)
		if errors.Is(err, io.EOF) {
			return off, nil
		}
		if err != nil {
			return off, err
		}
	}
}

// copyHashed copies src into dst, this goroutine reading and writing while a second one takes
// the SHA-256 of each chunk written, so that the copy and the hash share two cores.
func copyHashed(dst, src *os.File) ([32]byte, int64, error) {
	const ring = 4
	free := make(chan []byte, ring)
	for range ring {
		free <- make([]byte, chunk)
	}
	written := make(chan []byte, ring)
	summed := make(chan [32]byte)
	go func() {
		h := sha256.New()
		for b := range written {
			h.Write(b)
			free <- b[:cap(b)]
		}
		summed <- [32]byte(h.Sum(nil))
	}()
	var off int64
	var failed error
	for {
		buf := <-free
		n, err := src.ReadAt(buf, off)
		if n > 0 {
			if _, werr := dst.WriteAt(buf[:n], off); werr != nil {
				failed = werr
				break
			}
			off += int64(n)
			written <- buf[:n]
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			failed = err
			break
		}
	}
	close(written)
	sum := <-summed
	return sum, off, failed
}

// readBack reads f again, which must hold size bytes, and returns their keyed digest.
func readBack(f *os.File, size int64) (uint64, error) {
	var h maphash.Hash
	n, err := hashAll(f, &h)
	if err == nil && n != size {
		err = fmt.Errorf("read back %d bytes, wrote %d", n, size)
	}
	return h.Sum64(), err
}
