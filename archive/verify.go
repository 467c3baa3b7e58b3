package archive

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
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
	// ArchiveChecked says the archive's size and SHA-256 were compared with
	// VerifyOptions.Expect.
	ArchiveChecked bool `json:"archive_checked"`
	// Problems lists everything wrong, in the order found; never nil.
	Problems []Problem `json:"problems"`
}

// OK reports whether the archive verified.
func (v *VerifyResult) OK() bool { return len(v.Problems) == 0 }

// VerifyOptions configure VerifyWith; the zero value checks the archive alone.
type VerifyOptions struct {
	// Expect, when set, is the archive's size and SHA-256 as its receipt records them: the
	// archive file must match.
	Expect *Summary
}

// Verify reads the archive at path end to end without writing anything, in memory bounded
// whatever its size: the zip structure, every entry's CRC-32 and size, every file's SHA-256
// and size against the manifest, the entries against the manifest's list, and whether every
// name is safe to restore. The error is for an archive that cannot be read at all; what is
// wrong inside it is in the result's Problems.
func Verify(ctx context.Context, path string) (*VerifyResult, error) {
	return VerifyWith(ctx, path, VerifyOptions{})
}

// VerifyWith is Verify with options.
func VerifyWith(ctx context.Context, path string, opts VerifyOptions) (*VerifyResult, error) {
	r, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.Verify(ctx, opts)
}

// Verify checks the archive r reads, as the function Verify does.
func (r *Reader) Verify(ctx context.Context, opts VerifyOptions) (*VerifyResult, error) {
	res := &VerifyResult{HasManifest: r.HasManifest, Problems: []Problem{}}
	var archiveSum chan archiveSummary
	if opts.Expect != nil {
		// The archive file is hashed alongside the entries: a second core halves the wait.
		archiveSum = make(chan archiveSummary, 1)
		go func() { archiveSum <- r.sum(ctx) }()
	}
	if r.ManifestErr != nil {
		res.problem(ManifestName, r.ManifestErr.Error())
	}
	if r.Manifest != nil {
		res.RecordedStatus = r.Manifest.Status
	}
	res.Problems = append(res.Problems, CheckNames(r.Entries)...)
	err := r.verifyEntries(ctx, res)
	if archiveSum != nil {
		s := <-archiveSum
		if err == nil {
			err = s.err
		}
		res.ArchiveChecked = true
		res.compare(s.Summary, *opts.Expect)
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

func (r *Reader) verifyEntries(ctx context.Context, res *VerifyResult) error {
	listed := map[string]File{}
	if r.Manifest != nil {
		for _, f := range r.Manifest.Files {
			listed[f.Path] = f
		}
	}
	buf := make([]byte, copyBufSize)
	for _, e := range r.Entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		res.count(e)
		var wantSum string
		if r.Manifest != nil && !e.IsDir {
			wantSum = res.compareListed(e, listed)
		}
		got, err := copyChecked(&progressWriter{ctx: ctx, w: io.Discard}, e, wantSum, buf)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			res.problem(e.StoredName(), err.Error())
			continue
		}
		if !e.IsDir && e.Kind == "" {
			res.Bytes += got.Size
		}
	}
	if r.Manifest != nil {
		for _, f := range r.Manifest.Files {
			if _, missing := listed[f.Path]; missing {
				res.problem(f.Path, "in the manifest but missing from the archive")
			}
		}
	}
	return nil
}

// compareListed checks e against its record in the manifest, taking the record out of
// listed (what is left at the end is missing), and returns the SHA-256 e must have.
func (res *VerifyResult) compareListed(e *Entry, listed map[string]File) string {
	want, ok := listed[e.Name]
	delete(listed, e.Name)
	switch {
	case !ok:
		res.problem(e.StoredName(), "not in the manifest")
	case e.Kind != "":
		res.problem(e.Name, fmt.Sprintf("a %s entry, the manifest says a file", e.Kind))
		return ""
	case e.Size != want.Size:
		res.problem(e.Name, fmt.Sprintf("size %d, the manifest says %d", e.Size, want.Size))
	}
	return want.SHA256
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

func (res *VerifyResult) compare(got, want Summary) {
	if got.Size != want.Size {
		res.problem("", fmt.Sprintf("archive is %d bytes, the receipt says %d", got.Size, want.Size))
	} else if got.SHA256 != want.SHA256 {
		res.problem("", "archive sha256 does not match the receipt")
	}
}

type archiveSummary struct {
	Summary
	err error
}

// sum hashes the whole archive file.
func (r *Reader) sum(ctx context.Context) archiveSummary {
	h := sha256.New()
	src := io.NewSectionReader(r.ra, 0, r.size)
	n, err := io.CopyBuffer(h, &ctxReader{ctx: ctx, r: src}, make([]byte, copyBufSize))
	return archiveSummary{Summary{Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, err}
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
