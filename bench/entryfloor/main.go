// Command entryfloor is the benchmark's floor for reading an archive back: the least that
// backup verify and backup restore must do and stay as trusted, done on every core with
// nothing else.
//
//	entryfloor verify ARCHIVE
//	entryfloor restore ARCHIVE DEST
//	entryfloor restore-rules ARCHIVE DEST
//
// verify takes the SHA-256 of the whole archive (the check against its receipt) while one
// worker per CPU inflates every entry with the decoder backup uses and takes each entry's
// CRC-32 and SHA-256. restore inflates and checks the entries the same way and writes each
// into a file of a new tree under DEST (created exclusively, its mode and modification time
// set), as unzip does; it takes no SHA-256 of the whole archive, since backup restore checks
// each entry against the manifest and reads no receipt.
//
// It leaves out what depends on how the archive records files: parsing the manifest,
// comparing digests with it, checking local headers against the central directory, the
// order of output, and restore's temp files, folder descriptors and before-state. So it is
// a lower bound: verify and restore can come close to it, never under it.
//
// restore-rules is restore with the system calls and decoding that backup restore's rules
// (docs/restore.md) add to each entry, done the cheapest way: folders opened one component
// at a time without following links, kept open and watched for moves (inotify, and the mount
// table); each file made unnamed in its folder (O_TMPFILE), its time set through its
// descriptor, and linked to its name once one poll of the watches says no folder moved; each
// deflate stream read after the primer that makes its verdict independent of the entry read
// before it (archive/reader.go's forget). It still leaves out the rest of restore's work:
// the check of every local header before anything is written, the manifest, the identity
// checks of each file made and of each folder, temp files and before-state. So restore can
// come close to it, never under it, as long as it keeps those rules.
package main

import (
	"archive/zip"
	"bufio"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/flate"
	"golang.org/x/sys/unix"
)

func main() {
	var err error
	switch {
	case len(os.Args) == 3 && os.Args[1] == "verify":
		err = run(os.Args[2], "", false)
	case len(os.Args) == 4 && (os.Args[1] == "restore" || os.Args[1] == "restore-rules"):
		err = run(os.Args[2], os.Args[3], os.Args[1] == "restore-rules")
	default:
		fmt.Fprintln(os.Stderr, "usage: entryfloor verify ARCHIVE | entryfloor restore[-rules] ARCHIVE DEST")
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "entryfloor:", err)
		os.Exit(1)
	}
}

// run reads every entry of archive, into files below dest when dest is not "", keeping
// restore's rules (see restore-rules above) when rules is set.
func run(archive, dest string, rules bool) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	whole := make(chan error, 1)
	if dest == "" {
		go func() { whole <- hashWhole(f, st.Size()) }()
	} else {
		whole <- nil
	}
	z, err := zip.NewReader(f, st.Size())
	if err != nil {
		return err
	}
	var out *tree
	if dest != "" {
		if out, err = newTree(dest, rules); err != nil {
			return err
		}
		defer out.close()
	}
	var bytes atomic.Int64
	errs := make(chan error, runtime.NumCPU())
	jobs := make(chan []*zip.File, 4*runtime.NumCPU())
	var wg sync.WaitGroup
	for range runtime.NumCPU() {
		wg.Go(func() {
			r := newEntryReader()
			for batch := range jobs {
				for _, e := range batch {
					n, err := r.read(f, e, out)
					bytes.Add(n)
					if err != nil {
						errs <- fmt.Errorf("%s: %w", e.Name, err)
						for range jobs { // let the feeder finish
						}
						return
					}
				}
			}
		})
	}
	for batch := range batches(z.File) {
		jobs <- batch
	}
	close(jobs)
	wg.Wait()
	close(errs)
	if err := errors.Join(<-errs, <-whole); err != nil {
		return err
	}
	if err := out.folderTimes(z.File); err != nil {
		return err
	}
	fmt.Printf("%d entries, %d bytes\n", len(z.File), bytes.Load())
	return nil
}

// batchMax is the most entries a worker takes at once.
const batchMax = 64

// batches cuts entries into runs of one folder's entries, as backup restore hands them out:
// two workers making files in one folder at once wait for each other on its lock.
func batches(entries []*zip.File) func(func([]*zip.File) bool) {
	return func(yield func([]*zip.File) bool) {
		for start := 0; start < len(entries); {
			end := start + 1
			for end < len(entries) && end-start < batchMax &&
				filepath.Dir(entries[end].Name) == filepath.Dir(entries[start].Name) {
				end++
			}
			if !yield(entries[start:end]) {
				return
			}
			start = end
		}
	}
}

// hashWhole reads f's size bytes once and takes their SHA-256.
func hashWhole(f *os.File, size int64) error {
	h := sha256.New()
	n, err := io.CopyBuffer(h, io.NewSectionReader(f, 0, size), make([]byte, 1<<20))
	if err == nil && n != size {
		err = fmt.Errorf("read %d bytes of %d", n, size)
	}
	return err
}

// entryReader is one worker's decoder and buffers, reused for every entry it reads.
type entryReader struct {
	src *bufio.Reader
	fr  io.ReadCloser
	buf []byte
	crc hash.Hash32
	sum hash.Hash
}

func newEntryReader() *entryReader {
	src := bufio.NewReaderSize(nil, 64<<10)
	return &entryReader{src: src, fr: flate.NewReader(src), buf: make([]byte, 128<<10),
		crc: crc32.NewIEEE(), sum: sha256.New()}
}

// read inflates e and checks its CRC-32 and size, writing its data into a file of out when
// out is not nil.
func (r *entryReader) read(f *os.File, e *zip.File, out *tree) (int64, error) {
	if strings.HasSuffix(e.Name, "/") {
		return 0, out.mkdir(e.Name)
	}
	off, err := e.DataOffset()
	if err != nil {
		return 0, err
	}
	var data io.Reader = io.NewSectionReader(f, off, int64(e.CompressedSize64))
	if e.Method == zip.Deflate {
		if out.keepsRules() {
			if err := r.forget(); err != nil {
				return 0, err
			}
		}
		r.src.Reset(data)
		r.fr.(flate.Resetter).Reset(r.src, nil)
		data = r.fr
	}
	dst, err := out.create(e.Name, e)
	if err != nil {
		return 0, err
	}
	r.crc.Reset()
	r.sum.Reset()
	var n int64
	for {
		k, rerr := data.Read(r.buf)
		r.crc.Write(r.buf[:k])
		r.sum.Write(r.buf[:k])
		n += int64(k)
		if k > 0 && dst != nil {
			if _, err := dst.Write(r.buf[:k]); err != nil {
				dst.Close()
				return n, err
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return n, rerr
		}
	}
	if uint64(n) != e.UncompressedSize64 || r.crc.Sum32() != e.CRC32 {
		return n, errors.New("size or crc-32 mismatch")
	}
	return n, out.finish(dst, e.Name, e)
}

// tree is the new tree a restore writes into; a nil *tree writes nothing.
type tree struct {
	root    *os.File
	mu      sync.Mutex
	folders map[string]bool
	rules   *rules // nil: the plain floor
}

func newTree(dest string, keepRules bool) (*tree, error) {
	if err := os.Mkdir(dest, 0o755); err != nil {
		return nil, err
	}
	root, err := os.Open(dest)
	if err != nil {
		return nil, err
	}
	t := &tree{root: root, folders: map[string]bool{".": true}}
	if keepRules {
		if t.rules, err = newRules(int(root.Fd())); err != nil {
			root.Close()
			return nil, err
		}
	}
	return t, nil
}

func (t *tree) close() {
	t.rules.close()
	t.root.Close()
}

func (t *tree) keepsRules() bool { return t != nil && t.rules != nil }

// mkdir makes the folder name and those above it, once each.
func (t *tree) mkdir(name string) error {
	if t == nil {
		return nil
	}
	name = filepath.Clean(name)
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mkdirLocked(name)
}

func (t *tree) mkdirLocked(name string) error {
	if t.folders[name] {
		return nil
	}
	if err := t.mkdirLocked(filepath.Dir(name)); err != nil {
		return err
	}
	if err := t.makeFolder(name); err != nil {
		return err
	}
	t.folders[name] = true
	return nil
}

// makeFolder makes the folder name, whose parent is made; the rules floor also opens it and
// watches it.
func (t *tree) makeFolder(name string) error {
	if t.rules != nil {
		return t.rules.mkdir(name)
	}
	err := unix.Mkdirat(int(t.root.Fd()), name, 0o755)
	if err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("mkdir %s: %w", name, err)
	}
	return nil
}

// create makes the file name, which must not exist, in its folder.
func (t *tree) create(name string, e *zip.File) (*os.File, error) {
	if t == nil {
		return nil, nil
	}
	if err := t.mkdir(filepath.Dir(name)); err != nil {
		return nil, err
	}
	if t.rules != nil {
		return t.createUnnamed(name, e)
	}
	fd, err := unix.Openat(int(t.root.Fd()), name,
		unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(e.Mode().Perm()))
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", name, err)
	}
	return os.NewFile(uintptr(fd), name), nil
}

// finish closes the file name and sets its modification time, as unzip and backup restore do.
func (t *tree) finish(f *os.File, name string, e *zip.File) error {
	if f == nil {
		return nil
	}
	if t.rules != nil {
		return t.link(f, name, e)
	}
	if err := f.Close(); err != nil {
		return err
	}
	mtime := unix.NsecToTimespec(e.Modified.UnixNano())
	return unix.UtimesNanoAt(int(t.root.Fd()), name, []unix.Timespec{mtime, mtime}, unix.AT_SYMLINK_NOFOLLOW)
}

// folderTimes sets each folder's modification time once every file is in it, the deepest
// first, as unzip does at its end.
func (t *tree) folderTimes(entries []*zip.File) error {
	if t == nil {
		return nil
	}
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if !strings.HasSuffix(e.Name, "/") {
			continue
		}
		mtime := unix.NsecToTimespec(e.Modified.UnixNano())
		ts := []unix.Timespec{mtime, mtime}
		if err := unix.UtimesNanoAt(int(t.root.Fd()), filepath.Clean(e.Name), ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return err
		}
	}
	return nil
}
