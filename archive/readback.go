package archive

import (
	"archive/zip"
	"context"
	"errors"
	"hash/maphash"
	"io"
	"io/fs"
	"runtime"
	"strings"

	"backup/format"
	"backup/skiprules"
)

// ReadBack checks the archive at path that a Writer has just written, as Verify does with
// opts.Expect set to sum, but against m, the manifest the run gave CloseManifest, rather
// than the manifest parsed from the archive once more. What it proves is the same: the
// manifest entry on disk must have the SHA-256 of the bytes CloseManifest wrote
// (sum.ManifestSHA256), so it holds m; every other entry is read and compared with m's
// record of it, and m must be a manifest that parses (no name listed twice, every file with
// a digest). The central directory is streamed rather than held: at a million files the
// lists of Go's reader, of Verify and of the parsed manifest each took hundreds of MB, and
// m is held by the run anyway. m's lists must be sorted by path, as report.Recorder sorts
// them. Only opts.Jobs, opts.Unseal and opts.InflateCopied are used: for an encrypted archive, sum is the
// file's as stored (the ciphertext), and the entries are read through Unseal.
//
// The entries m marks Reused are not inflated again, unless opts.InflateCopied: the run
// copied their compressed bytes from a reference whose whole SHA-256 its receipt records,
// checking each against the keyed digest taken in that same pass (see refpass.go), and the
// archive's own digest, compared with sum's, proves that the file holds the bytes written.
// That digest is the keyed one the Writer took as it wrote a file (see writtenKey), else
// the SHA-256. Inflating them again would prove nothing new of a reference that its own
// run read back whole (a set's LATEST); of any other, it proves what no receipt does: that
// the bytes hashed were sound. Their headers are checked as every entry's are.
func ReadBack(ctx context.Context, path string, m *format.Manifest, sum Summary, opts VerifyOptions) (*VerifyResult, error) {
	f, size, err := openFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// An encrypted archive's file is hashed as stored, and its entries read from its zip.
	var zra io.ReaderAt = f
	zsize := size
	if opts.Unseal != nil {
		if zra, zsize, err = opts.Unseal(f, size); err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
	}
	sumCtx, cancelSum := context.WithCancel(ctx)
	defer cancelSum()
	var archiveSum <-chan archiveSummary
	if sum.written.ok && opts.Unseal == nil {
		archiveSum = startKeyed(sumCtx, f, size, sum)
	} else {
		archiveSum = startSum(sumCtx, f, size)
	}
	res := &VerifyResult{HasManifest: true, RecordedStatus: m.Status, Problems: []Problem{}}
	if err := m.CheckWritten(); err != nil {
		res.problem(format.ManifestName, "manifest is not valid: "+err.Error())
	}
	jobs := opts.Jobs
	if jobs <= 0 {
		jobs = runtime.NumCPU()
	}
	rb := &readBack{ctx: ctx, res: res, x: newManifestIndex(m), ra: zra, manifestSum: sum.ManifestSHA256.String(), inflateCopied: opts.InflateCopied}
	var walkErr error
	err = checkAll(ctx, res, jobs, false, new(VerifyProgress), nil, func(work *batcher) []foundProblem {
		defer work.close()
		rb.work = work
		if !rb.sendManifest(sum.manifestRecord) {
			return nil
		}
		walkErr = walkCentral(zra, zsize, rb.entry)
		res.Problems = append(res.Problems, rb.names...) // first, as Verify lists them
		return rb.end()
	}, nil)
	s := <-archiveSum
	switch {
	case err != nil:
		return nil, err
	case walkErr != nil && ctx.Err() != nil:
		return nil, ctx.Err()
	case walkErr != nil && readFailed(walkErr) != nil && !errors.Is(walkErr, errCentral) &&
		!errors.Is(walkErr, errEndRecords) && !errors.Is(walkErr, errTwoDirectories) && !errors.Is(walkErr, errTwoZip64Ends) &&
		!errors.Is(walkErr, errSplit) && !errors.Is(walkErr, errDirSize) && !errors.Is(walkErr, errZip64EndSize) &&
		!errors.Is(walkErr, errEntryDisk) &&
		!errors.Is(walkErr, errStopped):
		var pe *fs.PathError
		if errors.As(walkErr, &pe) {
			walkErr = pe.Err
		}
		return nil, &fs.PathError{Op: "read", Path: path, Err: walkErr} // a read that failed, not damage
	case walkErr != nil:
		return nil, &fs.PathError{Op: "read", Path: path, Err: errNoZip}
	case s.err != nil:
		return nil, s.err
	}
	res.ArchiveChecked = true
	res.compare(s.Summary, sum.Summary)
	return res, nil
}

// readBack hands the entries of a central directory being streamed to the workers, as
// Reader.dispatch hands out a Reader's entries.
type readBack struct {
	ctx         context.Context
	res         *VerifyResult
	x           *manifestIndex
	ra          io.ReaderAt
	manifestSum string
	work        *batcher
	// inflateCopied is VerifyOptions.InflateCopied.
	inflateCopied bool

	index     int
	manifests int
	// sent is the manifest's record sendManifest handed on before the walk; nil otherwise,
	// and once the walk has met it.
	sent    *centralRecord
	found   []foundProblem
	names   []Problem // what CheckNames finds, which Verify lists first
	checked string    // the folder of the last entry, whose parents were checked
}

var errStopped = errors.New("stopped")

// entry checks the record rec and hands its entry to the workers.
func (rb *readBack) entry(rec *centralRecord) error {
	f := &zip.File{FileHeader: rec.FileHeader}
	e := newEntry(f)
	f.Extra = nil // rec's, read by newEntry, and reused for the next record
	e.local = localRef{ra: rb.ra, off: rec.local}
	job := entryJob{index: rb.index, entry: e}
	if e.Name == format.ManifestName {
		rb.manifests++
		job.manifest, job.wantSum = true, rb.manifestSum
		switch {
		case rb.manifests > 1:
			rb.names = append(rb.names, Problem{Entry: format.ManifestName, Reason: errDuplicateName.Error()})
		case notAManifest(&f.FileHeader) != nil:
			rb.names = append(rb.names, Problem{Entry: format.ManifestName, Reason: notAManifest(&f.FileHeader).Error()})
		case e.hdr.bits&hdrOtherName != 0:
			rb.names = append(rb.names, Problem{Entry: format.ManifestName, Reason: errUnicodePath.Error()})
		}
		if rb.sentAlready(rec) {
			rb.index++
			return nil
		}
	} else {
		rb.res.count(e)
		rb.checkName(e)
		var p *Problem
		job.wantSum, p = rb.x.compare(e)
		job.copied = p == nil && rb.copied(e)
		if p != nil {
			rb.found = append(rb.found, foundProblem{index: rb.index, Problem: *p})
		}
		if e.IsDir && rb.manifests > 0 {
			rb.found = append(rb.found, foundProblem{index: rb.index, Problem: Problem{Entry: e.StoredName(), Reason: errAfterManifest.Error()}})
		}
	}
	rb.index++
	if !rb.work.add(job) {
		return errStopped
	}
	return nil
}

// sendManifest hands the manifest's entry to the workers before the walk of the central
// directory reaches its record, the last: inflating and hashing the manifest (megabytes in
// one stream) is the longest check of a read-back, and was its last 30 ms, on one core, at
// the end of every run of the bench corpus. The record is read where the Writer wrote it
// (at); one that is not the manifest's is left to the walk. False once ctx is done.
func (rb *readBack) sendManifest(at manifestAt) bool {
	if !at.ok {
		return true
	}
	rec, err := readCentralAt(rb.ra, at.off)
	if err != nil || rec.Name != format.ManifestName {
		return true
	}
	f := &zip.File{FileHeader: rec.FileHeader}
	e := newEntry(f)
	e.local = localRef{ra: rb.ra, off: rec.local}
	rb.sent = rec
	return rb.work.add(entryJob{index: at.index, entry: e, manifest: true, wantSum: rb.manifestSum}) && rb.work.flush()
}

// sentAlready reports whether rec, a manifest's record the walk met, is the one
// sendManifest handed on (the first such: a second is checked again, as a name stored
// twice is). Any other is checked as usual.
func (rb *readBack) sentAlready(rec *centralRecord) bool {
	if rb.sent == nil || !sameRecord(rb.sent, rec) {
		return false
	}
	rb.sent = nil
	return true
}

// copied reports whether e is a file that the run copied from its reference, unless such
// files are to be inflated too.
func (rb *readBack) copied(e *Entry) bool {
	if e.IsDir || e.Kind != "" || rb.inflateCopied {
		return false
	}
	f, ok := rb.x.File(e.Name)
	return ok && f.Reused
}

// checkName checks e's name as CheckNames does, against the manifest's records rather than
// the other entries: every entry is compared with its record, so a name stored twice meets
// its record seen already, and a name below a file or symlink has that record above it.
func (rb *readBack) checkName(e *Entry) {
	if err := checkEntryName(e); err != nil {
		rb.names = append(rb.names, Problem{Entry: e.StoredName(), Reason: err.Error()})
		return
	}
	if rb.x.seen(e) {
		rb.names = append(rb.names, Problem{Entry: e.StoredName(), Reason: errDuplicateName.Error()})
		return
	}
	dir, _, _ := cutLast(e.Name)
	if dir == rb.checked {
		return
	}
	for i := strings.IndexByte(e.Name, '/'); i >= 0; i = nextSlash(e.Name, i) {
		parent := e.Name[:i]
		if rb.x.FindFile(parent) >= 0 {
			rb.names = append(rb.names, Problem{Entry: e.StoredName(), Reason: belowNonDir(&Entry{Name: parent})})
			return
		}
		if rb.x.FindSymlink(parent) >= 0 {
			rb.names = append(rb.names, Problem{Entry: e.StoredName(), Reason: belowNonDir(&Entry{Name: parent, Kind: skiprules.KindSymlink})})
			return
		}
	}
	rb.checked = dir
}

// seen reports whether the record of e's name and type was met before.
func (x *manifestIndex) seen(e *Entry) bool {
	var i int
	var seen []bool
	switch {
	case e.IsDir:
		i, seen = x.FindDir(e.Name), x.seenDirs
	case e.Kind == skiprules.KindSymlink && x.v2:
		i, seen = x.FindSymlink(e.Name), x.seenSymlinks
	default:
		i, seen = x.FindFile(e.Name), x.seenFiles
	}
	return i >= 0 && seen[i]
}

func cutLast(name string) (dir, base string, ok bool) {
	i := strings.LastIndexByte(name, '/')
	if i < 0 {
		return "", name, false
	}
	return name[:i], name[i+1:], true
}

// end returns what the comparison found, with the records missing from the archive last.
func (rb *readBack) end() []foundProblem {
	if rb.manifests == 0 {
		rb.found = append(rb.found, foundProblem{index: rb.index, Problem: Problem{Entry: format.ManifestName, Reason: "missing from the archive"}})
	}
	for _, p := range rb.x.missing() {
		rb.found = append(rb.found, foundProblem{index: rb.index, Problem: p})
	}
	return rb.found
}

// startKeyed is startSum for a file the Writer wrote: it takes the keyed digest sum.written
// was taken with, and gives sum's SHA-256 when the two digests are equal (the file holds the
// bytes that SHA-256 was taken of), none otherwise.
func startKeyed(ctx context.Context, ra io.ReaderAt, size int64, sum Summary) <-chan archiveSummary {
	h := new(maphash.Hash)
	h.SetSeed(sum.written.seed)
	return startHash(ctx, ra, size, h, func(n int64) format.Summary {
		got := format.Summary{Size: n}
		if h.Sum64() == sum.written.sum {
			got.SHA256 = sum.SHA256
		}
		return got
	})
}
