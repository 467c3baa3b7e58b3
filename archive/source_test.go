package archive_test

import (
	"archive/zip"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"backup/archive"
	"backup/format"
	"backup/walker"
)

// copiedFile is a SourceFile whose bytes are a copy made from the file, as a database
// snapshot is: it reports the file's mode and mtime with the copy's size.
type copiedFile struct {
	*bytes.Reader
	info fs.FileInfo
	src  format.CopySource
}

func (c *copiedFile) Stat() (fs.FileInfo, error) { return c.info, nil }
func (c *copiedFile) Close() error               { return nil }
func (c *copiedFile) CopyOf() format.CopySource  { return c.src }

type copyInfo struct {
	fs.FileInfo
	size int64
}

func (i copyInfo) Size() int64 { return i.size }

func TestOpenHookErrorNamesItsOp(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644)
	cause := errors.New("database is locked")
	open := func(walker.Handle, string) (archive.SourceFile, error) {
		return nil, &archive.OpError{Op: "snapshot", Err: cause}
	}
	var warns []error
	path := archiveFiles(t, dir, []string{"f"}, archive.Options{Level: 1, Open: open, OnWarn: func(err error) { warns = append(warns, err) }})
	var pe *fs.PathError
	if len(warns) != 1 || !errors.As(warns[0], &pe) || pe.Op != "snapshot" || pe.Path != "f" || !errors.Is(pe, cause) {
		t.Errorf("warnings %v, want one snapshot error on f", warns)
	}
	checkEntries(t, path, map[string][]byte{})
}

// TestCopiedSourceIsStoredAsTheFile stores the copy's bytes under the file's name, with the
// file's mode and mtime, and tells OnCopy what it was copied from, before OnFile.
func TestCopiedSourceIsStoredAsTheFile(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "state.db")
	os.WriteFile(name, []byte("the live file, larger than its copy"), 0o640)
	mtime := time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)
	os.Chtimes(name, mtime, mtime)
	info, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	snap := []byte("the copy")
	src := format.CopySource{Kind: "sqlite", Size: info.Size(), ModTime: mtime}
	open := func(h walker.Handle, _ string) (archive.SourceFile, error) {
		return &copiedFile{bytes.NewReader(snap), copyInfo{info, int64(len(snap))}, src}, nil
	}
	var log []string
	opts := archive.Options{Level: 1, Open: open,
		OnCopy: func(name string, got format.CopySource) {
			if got != src {
				t.Errorf("OnCopy(%s, %+v), want %+v", name, got, src)
			}
			log = append(log, "copy "+name)
		},
		OnFile: func(f format.File) { log = append(log, "file "+f.Path) },
	}
	path := archiveFiles(t, dir, []string{"state.db"}, opts)
	if len(log) != 2 || log[0] != "copy state.db" || log[1] != "file state.db" {
		t.Errorf("hooks %q, want copy then file", log)
	}
	checkEntries(t, path, map[string][]byte{"state.db": snap})
	r, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	h := r.File[0].FileHeader
	if h.Mode() != 0o640 || !h.Modified.Equal(mtime) {
		t.Errorf("entry mode %v mtime %v, want the file's 0640 %v", h.Mode(), h.Modified, mtime)
	}
}

// TestManifestKeepsSnapshot writes a manifest whose file is a snapshot and reads it back.
func TestManifestKeepsSnapshot(t *testing.T) {
	src := &format.CopySource{Kind: "sqlite", Size: 4096, ModTime: time.Date(2026, 11, 29, 3, 0, 0, 5, time.UTC)}
	m := &format.Manifest{Status: "complete", Files: []format.File{
		{Path: "app/state.db", Size: 2048, SHA256: format.Digest{0xaa}, Snapshot: src},
		{Path: "app/x", Size: 1, SHA256: format.Digest{0xbb}},
	}}
	var buf bytes.Buffer
	if _, err := m.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	got, err := format.ParseManifest(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if s := got.Files[0].Snapshot; s == nil || *s != *src {
		t.Errorf("snapshot read back as %+v, want %+v", s, src)
	}
	if got.Files[1].Snapshot != nil {
		t.Errorf("a plain file read back with snapshot %+v", got.Files[1].Snapshot)
	}
}
