package archive

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"runtime"
	"sync/atomic"

	"backup/format"
)

// VerifyResult is what Verify found. The archive is verified when Problems is empty.
type VerifyResult struct {
	// Files and Bytes count the file entries read, and their uncompressed bytes.
	Files int   `json:"files"`
	Bytes int64 `json:"bytes"`
	// Dirs counts the directory entries, Other the symlinks, devices and other special
	// entries that another tool stored.
	Dirs  int `json:"dirs"`
	Other int `json:"other"`
	// HasManifest says the archive ends with a manifest. Without one it was made by another
	// tool and only the CRC-32 of each entry could be checked.
	HasManifest bool `json:"manifest"`
	// RecordedStatus is the status the manifest recorded at backup; "" without a manifest.
	RecordedStatus string `json:"recorded_status"`
	// ManifestRead says the manifest was read: RecordedStatus is its word. One that could
	// not be read (a problem names it) records nothing to hold a receipt to.
	ManifestRead bool `json:"-"`
	// Notes sums up the manifest's records of what was skipped, excluded and warned about,
	// when ManifestRead: what a receipt's counts and lists of them are held to.
	Notes format.Notes `json:"-"`
	// ArchiveChecked says the archive's size and SHA-256 were compared with
	// VerifyOptions.Expect.
	ArchiveChecked bool `json:"archive_checked"`
	// Problems lists everything wrong, in archive order whatever VerifyOptions.Jobs is (the
	// order a sequential read finds them in); never nil.
	Problems []Problem `json:"problems"`
}

// OK reports whether the archive verified.
func (v *VerifyResult) OK() bool { return len(v.Problems) == 0 }

// Err is the first problem as an error, saying how many more there are; nil when OK.
func (v *VerifyResult) Err() error {
	if v.OK() {
		return nil
	}
	more := ""
	if n := len(v.Problems); n > 1 {
		more = fmt.Sprintf(" (and %d more problems)", n-1)
	}
	return fmt.Errorf("%s%s", v.Problems[0], more)
}

// VerifyOptions configure Verify; the zero value checks the archive alone.
type VerifyOptions struct {
	// Expect, when set, is the archive's size and SHA-256 as its receipt records them: the
	// archive file must match.
	Expect *format.Summary
	// Jobs is how many entries are read at once, each by its own worker through a buffer of
	// its own; zero or less means one per CPU. The result is the same whatever it is.
	Jobs int
	// Progress, when set, is updated as the entries are checked, for the caller to poll
	// while Verify runs.
	Progress *VerifyProgress
	// Unseal, when set, opens an archive file that holds an encrypted zip (see Unseal): the
	// entries are read from the zip, and Expect is compared with the file as stored.
	Unseal Unseal
	// Entries, when set, is given the archive's entries once its directory is read; an error
	// it returns is a problem. The caller knows what the entries must be (a set's run holds
	// its source's name only), which nothing in the archive says.
	Entries func([]*Entry) error
	// InflateCopied makes ReadBack inflate the entries copied from the reference too: the
	// reference was not read back whole by the run that made it (see ReadBack).
	InflateCopied bool

	// oneByOne hands the entries to the workers one at a time, each read on its own, as
	// before batches (verify_batch.go): the tests compare the two.
	oneByOne bool
}

// VerifyProgress is how far a Verify has got. Verify updates it from its workers; a caller
// reads it from any goroutine.
type VerifyProgress struct {
	Entries, Bytes           atomic.Int64 // checked so far: entries, and bytes of file data
	TotalEntries, TotalBytes atomic.Int64 // set once the central directory is read; 0 before
}

// Verify reads the archive at path end to end without writing anything, in memory bounded
// whatever its size (entries are read in parallel, each streamed through a fixed buffer):
// the zip structure, every entry's CRC-32 and size, every file's SHA-256 and size against
// the manifest, the entries against the manifest's list, and whether every name is safe to
// restore. The error is for an archive that cannot be read at all; what is wrong inside it
// is in the result's Problems.
func Verify(ctx context.Context, path string, opts VerifyOptions) (*VerifyResult, error) {
	f, size, err := openFile(path)
	if err != nil {
		return nil, err
	}
	return VerifyFile(ctx, f, size, opts)
}

// VerifyFile is Verify for the regular file f (size bytes), already open, which it closes.
//
// The file is hashed once its directory and manifest are read, checking on its way that it
// still holds what they read (see Sum). Hashed from the start beside their reading, as it
// once was for speed, it proved the file as it was when the hash read it: its owner could
// write a manifest saying complete while it was read, and the real one back for the hash.
func VerifyFile(ctx context.Context, f *os.File, size int64, opts VerifyOptions) (*VerifyResult, error) {
	r, err := OpenFile(f, size, ReadOptions{Unseal: opts.Unseal})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.Verify(ctx, opts)
}

// Verify checks the archive r reads, as the function Verify does. The file is hashed
// alongside the entries (a second core halves the wait); when r recorded what its reading
// read (OpenFile, NewCheckedReader), the hash checks those ranges on its way, and a file
// that no longer held them is a problem (ErrChangedWhileRead).
func (r *Reader) Verify(ctx context.Context, opts VerifyOptions) (*VerifyResult, error) {
	var archiveSum <-chan archiveSummary
	if opts.Expect != nil {
		sumCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		archiveSum = r.startSum(sumCtx)
	}
	return r.verify(ctx, opts, archiveSum)
}

// startSum hashes the archive file on a goroutine of its own, as Sum does.
func (r *Reader) startSum(ctx context.Context) <-chan archiveSummary {
	if r.parsed == nil {
		return startSum(ctx, r.file, r.fileSize)
	}
	out := make(chan archiveSummary, 1)
	go func() {
		s, err := r.Sum(ctx)
		out <- archiveSummary{s, err}
	}()
	return out
}

// verify is Verify with the archive's hash, when opts.Expect asks for it, already running:
// it delivers one archiveSummary on archiveSum.
func (r *Reader) verify(ctx context.Context, opts VerifyOptions, archiveSum <-chan archiveSummary) (*VerifyResult, error) {
	res := &VerifyResult{HasManifest: r.HasManifest, Problems: []Problem{}}
	if r.ManifestErr != nil {
		res.problem(format.ManifestName, r.ManifestErr.Error())
	}
	if r.Manifest != nil {
		res.RecordedStatus, res.ManifestRead, res.Notes = r.Manifest.Status, true, r.Manifest.Notes()
	}
	res.Problems = append(res.Problems, CheckNames(r.Entries)...)
	if opts.Entries != nil {
		if err := opts.Entries(r.Entries); err != nil {
			res.Problems = append(res.Problems, Problem{Reason: err.Error()})
		}
	}
	if r.Manifest != nil {
		// The paths a before-state's undo removes are names restore refuses as it refuses
		// an entry's.
		for _, c := range r.Manifest.Created {
			if err := CheckName(c.Path, HostUnix); err != nil {
				res.problem(c.Path, "created path: "+err.Error())
			}
		}
	}
	jobs := opts.Jobs
	if jobs <= 0 {
		jobs = runtime.NumCPU()
	}
	progress := opts.Progress
	if progress == nil {
		progress = new(VerifyProgress) // counted all the same: the workers need not ask
	}
	// The bytes first: a caller that sees TotalEntries set sees TotalBytes too.
	progress.TotalBytes.Store(r.fileBytes())
	progress.TotalEntries.Store(int64(len(r.Entries)))
	err := r.verifyEntries(ctx, res, jobs, opts.oneByOne, progress)
	if archiveSum != nil {
		s := <-archiveSum
		switch {
		case errors.Is(s.err, ErrChangedWhileRead):
			res.problem("", s.err.Error()) // the file is not what was read: a verdict on it
		case err == nil && s.err != nil:
			err = s.err
		default:
			res.compare(s.Summary, *opts.Expect)
		}
		res.ArchiveChecked = true
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// fileBytes is the size of the file entries' data, as a check reads it.
func (r *Reader) fileBytes() int64 {
	var n int64
	for _, e := range r.Entries {
		if !e.IsDir && e.Kind == "" {
			n += e.Size
		}
	}
	return n
}

func (res *VerifyResult) count(e *Entry) {
	switch {
	case e.IsDir:
		res.Dirs++
	case e.Kind != "":
		res.Other++
	default:
		res.Files++
	}
}

func (res *VerifyResult) problem(entry, reason string) {
	res.Problems = append(res.Problems, Problem{Entry: entry, Reason: reason})
}

func (res *VerifyResult) compare(got, want format.Summary) {
	if err := want.Match(got); err != nil {
		res.problem("", err.Error())
	}
}

type archiveSummary struct {
	format.Summary
	err error
}

// startSum hashes the size bytes of the archive file ra on a goroutine of its own, which
// delivers the result on the channel and ends; it stops early once ctx is done.
func startSum(ctx context.Context, ra io.ReaderAt, size int64) <-chan archiveSummary {
	h := sha256.New()
	return startHash(ctx, ra, size, h, func(n int64) format.Summary {
		return format.Summary{Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}
	})
}

// startHash is startSum with the hash h, whose sum summary turns into the archive's summary
// once the n bytes read are hashed.
func startHash(ctx context.Context, ra io.ReaderAt, size int64, h hash.Hash, summary func(n int64) format.Summary) <-chan archiveSummary {
	out := make(chan archiveSummary, 1)
	go func() {
		src := io.NewSectionReader(ra, 0, size)
		n, err := io.CopyBuffer(h, &ctxReader{ctx: ctx, r: src}, make([]byte, copyBufSize))
		out <- archiveSummary{summary(n), err}
	}()
	return out
}

// ctxReader stops a long read once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
