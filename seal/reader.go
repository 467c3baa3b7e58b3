package seal

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"

	"filippo.io/age"
)

// magic begins every binary age file: what tells an encrypted archive from a zip.
const magic = "age-encryption.org/v1\n"

// Ext ends the name of an age file, and so of an encrypted archive (NAME.zip.age).
const Ext = ".age"

// IsSealed reports whether the file ra reads is an age file, by its first bytes; one that
// cannot be read is not.
func IsSealed(ra io.ReaderAt) bool {
	sealed, _ := readsSealed(ra)
	return sealed
}

// ReadsSealed is IsSealed with the read's error: a file whose first bytes cannot be read is
// not known to be either.
func ReadsSealed(ra io.ReaderAt) (bool, error) { return readsSealed(ra) }

// readsSealed is IsSealed with the read's error: a file shorter than the magic is not an
// age file, but one whose first bytes cannot be read is not known to be a zip either.
func readsSealed(ra io.ReaderAt) (bool, error) {
	buf := make([]byte, len(magic))
	n, err := ra.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	return n == len(buf) && string(buf) == magic, nil
}

// ErrNoIdentity is Unseal's error for an encrypted archive when no identity was given.
var ErrNoIdentity = errors.New("the archive is encrypted, and no identity was given to decrypt it")

// ErrNotAge is UnsealAge's error for a file that is not an age file.
var ErrNotAge = errors.New("it is not an age file, though its receipt records an encrypted archive (a plain zip put in its place?)")

// UnsealAge is Unseal for an archive file that must be an age file, as its receipt records
// it: any other file, a plain zip among them, is ErrNotAge, not read as the zip it is.
// Whoever can write a set can put a plain zip at an encrypted archive's name, with a
// receipt to match its SHA-256, that a command without a key would read.
func (ids *Identities) UnsealAge(file io.ReaderAt, size int64) (io.ReaderAt, int64, error) {
	switch sealed, err := readsSealed(file); {
	case err != nil:
		return nil, 0, err
	case !sealed:
		return nil, 0, ErrNotAge
	}
	return ids.Unseal(file, size)
}

// NoMatchError is Unseal's error when none of the identities is one the archive was
// encrypted to.
type NoMatchError struct {
	// Recipients is how many recipients the archive's header names.
	Recipients int
}

func (e *NoMatchError) Error() string {
	n := fmt.Sprintf("%d recipients", e.Recipients)
	if e.Recipients == 1 {
		n = "1 recipient"
	}
	return "no identity matches: the archive is for " + n
}

// Unseal gives random access to the plaintext of the archive file (size bytes) that file
// reads: for an age file, an io.ReaderAt that decrypts the chunks it is asked for; for any
// other file, file itself. Only the header and the last chunk are read here (age checks
// the file's size by them). An encrypted archive without identities is ErrNoIdentity, one
// for none of them a *NoMatchError; a damaged header or last chunk an error that says so.
// The reader may be used from several goroutines at once.
func (ids *Identities) Unseal(file io.ReaderAt, size int64) (io.ReaderAt, int64, error) {
	switch sealed, err := readsSealed(file); {
	case err != nil:
		return nil, 0, err
	case !sealed:
		return file, size, nil
	}
	if ids.Len() == 0 {
		return nil, 0, ErrNoIdentity
	}
	reads := &firstFailure{ra: file}
	ra, n, err := age.DecryptReaderAt(reads, size, ids.list...)
	var nomatch *age.NoIdentityMatchError
	switch {
	case errors.As(err, &nomatch):
		return nil, 0, &NoMatchError{Recipients: len(nomatch.StanzaTypes)}
	case err != nil && reads.failed() != nil:
		return nil, 0, fmt.Errorf("cannot decrypt the archive: %w", reads.failed()) // a read, not the file, failed
	case err != nil:
		return nil, 0, fmt.Errorf("cannot decrypt the archive (damaged, or cut short?): %w", err)
	}
	return &plain{ra: ra, size: n}, n, nil
}

// firstFailure passes reads on to ra and remembers the first that failed (io.EOF, at the
// end of the file, is no failure), so that a failed read is not taken for damage. It gives a
// failed read as a *fileReadError, which age's reader wraps, so that plain can tell it from
// a chunk age cannot authenticate.
type firstFailure struct {
	ra  io.ReaderAt
	err atomic.Pointer[error]
}

func (f *firstFailure) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.ra.ReadAt(p, off)
	if err != nil && err != io.EOF {
		f.err.CompareAndSwap(nil, &err)
		return n, &fileReadError{err}
	}
	return n, err
}

// fileReadError is a read of the encrypted file that failed: the file's, not its content's.
type fileReadError struct{ err error }

func (e *fileReadError) Error() string { return e.err.Error() }
func (e *fileReadError) Unwrap() error { return e.err }

func (f *firstFailure) failed() error {
	if p := f.err.Load(); p != nil {
		return *p
	}
	return nil
}

// chunkSize is the plaintext size of an age payload chunk: the unit of decryption.
const chunkSize = 64 << 10

// keptChunks is how many decrypted chunks a plain keeps (2 MiB). Age's reader decrypts a
// whole chunk for any read and keeps one; a zip reader asks for a few bytes at a time (a
// local header, then the data behind it) from several goroutines, and would have each chunk
// decrypted again and again.
const keptChunks = 32

// readAhead is how many chunks a plain asks age for at once when one is missing. Age
// allocates a chunk's buffer for every call, whatever its length, and a reader that needs a
// chunk mostly needs the ones after it. Eight at a time, into reused buffers, took verify
// --identity of the bench corpus's archive from 1.26 s to 1.11 (a plain verify: 1.02).
const readAhead = 8

// plain is the plaintext of an age file, read by whole chunks, the last few kept. The
// buffers chunks are decrypted into are reused once no kept chunk is in them: bytes are
// copied out of a kept chunk under mu, so none is read after it is dropped. Reading in
// order, a few buffers serve; random reads may leave one kept chunk in each, at most
// keptChunks buffers (16 MiB) and the free ones.
type plain struct {
	ra   io.ReaderAt // age's, which authenticates every chunk it decrypts
	size int64

	mu     sync.Mutex
	chunks []chunk  // most recently used last
	free   []*block // buffers no kept chunk is in
	failed map[int64]error
}

type chunk struct {
	index int64
	data  []byte
	in    *block
}

// block is a buffer of readAhead chunks, and how many kept chunks are in it.
type block struct {
	buf  []byte
	kept int
}

// ReadAt reads from the chunks that hold p's range.
func (p *plain) ReadAt(b []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	n := 0
	for n < len(b) && off+int64(n) < p.size {
		at := off + int64(n)
		m, err := p.readChunk(b[n:], at/chunkSize, int(at%chunkSize))
		if err != nil {
			return n, err
		}
		n += m
	}
	if n < len(b) {
		return n, io.EOF
	}
	return n, nil
}

// readChunk copies chunk i's plaintext from byte from on into b, from those kept or
// decrypted now with the few after it that are not kept (readAhead). When the file's read
// failed on a chunk after i, this read fails with that error: a read that needed the chunk
// later would read it again, where a transient I/O error would pass, and no read may need
// it at all (attack passes 23 and 25: verify said ok). A chunk after i that age cannot
// authenticate is damage in that chunk: it is not kept, and fails the read that needs it.
func (p *plain) readChunk(b []byte, i int64, from int) (int, error) {
	p.mu.Lock()
	if err, ok := p.failed[i]; ok {
		p.mu.Unlock()
		return 0, fmt.Errorf("encrypted archive: %w", err)
	}
	if data, ok := p.kept(i); ok {
		defer p.mu.Unlock()
		return copy(b, data[from:]), nil
	}
	n := int64(1)
	for n < readAhead && (i+n)*chunkSize < p.size && p.indexOf(i+n) < 0 {
		n++
	}
	blk := p.block()
	p.mu.Unlock()
	start := i * chunkSize
	buf := blk.buf[:min(n*chunkSize, p.size-start)]
	got, err := p.ra.ReadAt(buf, start)
	p.mu.Lock()
	defer p.mu.Unlock()
	first := min(chunkSize, len(buf))
	if got < first {
		p.release(blk)
		// age says which: "failed to decrypt and authenticate chunk at offset N" (damage),
		// or the read of the file or object that failed.
		return 0, fmt.Errorf("encrypted archive: %w", err)
	}
	m := copy(b, buf[from:first])
	readFailed := got < len(buf) && errors.As(err, new(*fileReadError))
	if err != nil && got < len(buf) && !readFailed {
		if p.failed == nil {
			p.failed = map[int64]error{}
		}
		p.failed[i+int64(got)/chunkSize] = err // the chunk the read stopped in
	}
	for k := int64(0); k < n; k++ {
		lo, hi := k*chunkSize, min((k+1)*chunkSize, int64(len(buf)))
		if hi > int64(got) {
			break
		}
		p.keep(i+k, buf[lo:hi:hi], blk)
	}
	if blk.kept == 0 {
		p.release(blk)
	}
	if readFailed {
		return 0, fmt.Errorf("encrypted archive: %w", err)
	}
	return m, nil
}

// block returns a buffer no kept chunk is in, a new one when none is free.
func (p *plain) block() *block {
	if k := len(p.free); k > 0 {
		blk := p.free[k-1]
		p.free = p.free[:k-1]
		return blk
	}
	return &block{buf: make([]byte, readAhead*chunkSize)}
}

// release makes blk free for reuse, unless keptChunks' worth are free already.
func (p *plain) release(blk *block) {
	if len(p.free) < keptChunks/readAhead {
		p.free = append(p.free, blk)
	}
}

// kept returns chunk i when it is kept, and makes it the most recently used.
func (p *plain) kept(i int64) ([]byte, bool) {
	j := p.indexOf(i)
	if j < 0 {
		return nil, false
	}
	c := p.chunks[j]
	copy(p.chunks[j:], p.chunks[j+1:])
	p.chunks[len(p.chunks)-1] = c
	return c.data, true
}

// indexOf is where chunk i is in p.chunks; -1 when it is not kept.
func (p *plain) indexOf(i int64) int {
	return slices.IndexFunc(p.chunks, func(c chunk) bool { return c.index == i })
}

// keep adds chunk i, in blk, unless another reader kept it meanwhile, dropping the least
// recently used when full.
func (p *plain) keep(i int64, data []byte, blk *block) {
	if p.indexOf(i) >= 0 {
		return
	}
	if len(p.chunks) == keptChunks {
		old := p.chunks[0].in
		p.chunks = append(p.chunks[:0], p.chunks[1:]...)
		if old.kept--; old.kept == 0 {
			p.release(old)
		}
	}
	blk.kept++
	p.chunks = append(p.chunks, chunk{i, data, blk})
}
