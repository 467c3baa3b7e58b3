package format

import (
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"slices"
	"strings"
)

// ErrNotAsWritten is ScanManifest's answer for a manifest it cannot check without holding
// its files: one whose files are not sorted by path, as backup writes them, that lists them
// twice, or in which something is wrong that ParseManifest words. ParseManifest reads it.
var ErrNotAsWritten = errors.New("manifest not as backup writes it")

// ScanManifest reads a manifest as ParseManifest does, but hands each of its files to file
// as it is read (the *File is valid only during the call: it is reused), and keeps none:
// the manifest returned has no Files (an empty list when the manifest has a list of
// files). A reader that needs each file once (a reference, matching files to its own
// records) holds a record of a file at a time instead of a million (hundreds of MB).
//
// It checks what ParseManifest checks, on the way: without a map of every name, a name
// listed twice is found because backup writes the files sorted by path. For a manifest
// that is not so, or that fails a check, it returns ErrNotAsWritten, having handed some
// files to file already: the reader then takes ParseManifestOf's answer instead. Like
// ParseManifestOf, it reads the manifest as in says.
func ScanManifest(r io.Reader, in Within, file func(*File)) (*Manifest, error) {
	lr := &io.LimitedReader{R: r, N: MaxManifestSize + 1}
	d := newManifestDecoder(lr, in)
	s := &fileScan{file: file, seed: maphash.MakeSeed()}
	d.scan = s
	var wire manifestWire
	err := d.decode(&wire)
	switch {
	case s.notAsWritten:
		return nil, ErrNotAsWritten
	case err != nil && lr.N <= 0:
		return nil, fmt.Errorf("manifest is larger than %d bytes", MaxManifestSize)
	case err != nil:
		return nil, fmt.Errorf("manifest is not valid: %w", err)
	}
	if err := d.trailing(); err != nil {
		return nil, fmt.Errorf("manifest is not valid: %w", err)
	}
	m, err := fromWire(&wire)
	if err != nil || s.v2Fields && m.Schema == ManifestSchemaV1 || s.symlinkIsFile(m.Symlinks) || s.createdIsFile(m.Created) {
		return nil, ErrNotAsWritten
	}
	if s.lists > 0 {
		m.Files = []File{} // as ParseManifest has it for "files": [], unlike no "files"
	}
	return m, nil
}

// ReadManifest is ParseManifestOf for a manifest as backup writes it, its files gathered
// straight into a list made for about as many as the archive's entries: ParseManifest holds
// the JSON records of all the files (128 bytes each) and then makes their list, 30% more of
// it as it grows. It returns ErrNotAsWritten as ScanManifest does.
func ReadManifest(r io.Reader, in Within) (*Manifest, error) {
	files := GrowFiles(nil, in.Entries)
	m, err := ScanManifest(r, in, func(f *File) { files = append(files, *f) })
	if err != nil {
		return nil, err
	}
	if len(files) > 0 {
		m.Files = files
	}
	return m, nil
}

// fileScan is what ScanManifest keeps of the files it has handed on: the last path, and a
// keyed digest of each path (8 bytes a file) to find a symlink listed as a file too.
type fileScan struct {
	file         func(*File)
	cur          File // the file being handed on: one for all, rather than one allocated each
	seed         maphash.Seed
	last         string
	paths        []uint64
	lists        int  // how many lists of files the manifest has
	v2Fields     bool // a file has a v2 field
	notAsWritten bool
}

// take checks the file j records as ParseManifest would, and hands it on; false when it
// cannot, the manifest not being as backup writes it.
func (s *fileScan) take(j *fileJSON) bool {
	f := &s.cur
	var err error
	*f, err = j.value()
	switch {
	case err != nil, f.Path == "", f.Size < 0, f.SHA256.IsZero(),
		len(s.paths) > 0 && strings.Compare(s.last, f.Path) >= 0:
		s.notAsWritten = true
		return false
	}
	s.v2Fields = s.v2Fields || hasV2Fields(*f)
	s.last = f.Path
	s.paths = append(s.paths, maphash.String(s.seed, f.Path))
	s.file(f)
	return true
}

// symlinkIsFile says whether a symlink may have the path of a file; it cannot tell
// between that and two paths of the same digest.
func (s *fileScan) symlinkIsFile(symlinks []Symlink) bool {
	slices.Sort(s.paths)
	for _, l := range symlinks {
		if _, found := slices.BinarySearch(s.paths, maphash.String(s.seed, l.Path)); found {
			return true
		}
	}
	return false
}

// createdIsFile says whether a created path may have the path of a file (ParseManifest then
// tells: see checkCreated). Call it after symlinkIsFile, which sorts the digests.
func (s *fileScan) createdIsFile(created []Created) bool {
	for _, c := range created {
		if _, found := slices.BinarySearch(s.paths, maphash.String(s.seed, c.Path)); found {
			return true
		}
	}
	return false
}

// scanFiles decodes the list of files (the next byte is its '[') as decodeList would, each
// record into the same one, handed to d.scan once decoded. A second list of files in the
// manifest, which encoding/json would decode over the first, is not as backup writes it.
func (d *manifestDecoder) scanFiles() error {
	s := d.scan
	if s.lists++; s.lists > 1 {
		s.notAsWritten = true
		return ErrNotAsWritten
	}
	one := make([]fileJSON, 1)
	_, err := d.eachElement(func(_ int, c byte) error {
		if err := decodeInto(d, &one, c, "files", parseFileRecord); err != nil {
			return err
		}
		if d.stop == nil && d.saved == nil && !s.take(&one[0]) {
			return ErrNotAsWritten
		}
		return nil
	})
	return err
}
