package archive

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"backup/format"
)

// TestReferenceProvedBesideItsParse: the manifest is parsed beside the pass over the file,
// which takes the ranges the parse read only when it reaches the manifest. A file that
// held other bytes for the parse than for the pass (whose SHA-256 then matches the
// receipt) is not trusted, whether they differ in the central directory, read before the
// pass, or in the manifest's entry, read beside it; and a parse that fails says its own
// error, not the pass's.
func TestReferenceProvedBesideItsParse(t *testing.T) {
	// Enough files that the central directory alone is longer than the end of the file the
	// parse reads to find it: the manifest's entry is then read by the manifest's parse only.
	dir := refTree(t)
	for i := range 40 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("file-%02d.txt", i)), []byte("some text"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := refArchive(t, dir)
	sum := fileSum(t, path)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	local := bytes.Index(orig, []byte(format.ManifestName)) - localLen // the manifest's local header
	if local < 0 || !bytes.HasPrefix(orig[local:], []byte("PK\x03\x04")) {
		t.Fatal("no local header of the manifest found")
	}
	edit := func(at int, flip byte) []byte {
		b := bytes.Clone(orig)
		b[at] ^= flip
		return b
	}
	central := bytes.Index(orig, []byte("PK\x01\x02"))
	if len(orig)-local < 2048 {
		t.Fatalf("the manifest's entry is %d bytes from the end: the parse of the central directory reads it", len(orig)-local)
	}
	dataAt := local + localLen + len(format.ManifestName) + int(le16(orig[local+28:]))
	for _, tt := range []struct {
		name   string
		parsed []byte
		want   error
	}{
		{"unchanged", orig, nil},
		// The CRC-32 of the first central record, which the parse takes as it is.
		{"central record", edit(central+16, 0xff), ErrNotAsRecorded},
		// The version needed to extract the manifest, which the parse reads and ignores.
		{"manifest's local header", edit(local+4, 0x01), ErrNotAsRecorded},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ref := &Reference{size: int64(len(orig))}
			rec := &recordingReader{ra: bytes.NewReader(tt.parsed)}
			comp := format.Compression{Method: format.Deflate, Level: DefaultLevel}
			if err := ref.readWhileProving(t.Context(), sum, comp, bytes.NewReader(orig), rec); err != tt.want {
				t.Errorf("readWhileProving = %v, want %v", err, tt.want)
			}
			if tt.want == nil && ref.Reusable() == 0 {
				t.Error("nothing to reuse: the test needs records")
			}
		})
	}
	t.Run("manifest's data", func(t *testing.T) {
		ref := &Reference{size: int64(len(orig))}
		rec := &recordingReader{ra: bytes.NewReader(edit(dataAt+2, 0x55))}
		err := ref.readWhileProving(t.Context(), sum, format.Compression{Method: format.Deflate, Level: DefaultLevel}, bytes.NewReader(orig), rec)
		if err == nil || errors.Is(err, errParseFailed) || errors.Is(err, ErrNotAsRecorded) {
			t.Errorf("readWhileProving = %v, want the parse's error", err)
		}
	})
}

// TestRangeCheckAdd: ranges a parse read after the pass began are checked when they are
// ahead of the pass; one that begins where the pass has been fails the check.
func TestRangeCheckAdd(t *testing.T) {
	data := make([]byte, 1000)
	for i := range data {
		data[i] = byte(i * 13)
	}
	rec := &recordingReader{ra: bytes.NewReader(data)}
	rec.ReadAt(make([]byte, 100), 50)
	rec.ReadAt(make([]byte, 100), 600)
	early, late := rec.reads[:1], rec.reads[1:]

	var c rangeCheck
	if !c.feed(data[:500], 0) {
		t.Fatal("feed failed with no range")
	}
	if c.add(early, 500) {
		t.Error("a range the pass had gone by was taken")
	}
	c = rangeCheck{}
	c.feed(data[:500], 0)
	if !c.add(late, 500) || !c.feed(data[500:], 500) || !c.done() {
		t.Error("a range ahead of the pass failed or was not checked")
	}
	changed := bytes.Clone(data)
	changed[650] ^= 1
	c = rangeCheck{}
	c.feed(changed[:500], 0)
	if !c.add(late, 500) || c.feed(changed[500:], 500) {
		t.Error("a range ahead of the pass that changed was not found")
	}
}

// TestKeepMovesDamage: the files the manifest gives no SHA-256 are dropped after the pass
// has keyed them all; what it found of the others stays with them.
func TestKeepMovesDamage(t *testing.T) {
	errA, errC := errors.New("a"), errors.New("c")
	sha := format.Digest{1}
	ref := &Reference{files: []refFile{{size: 1, sha: sha}, {size: 2}, {size: 3, sha: sha}, {size: 4}},
		damage: map[int32]error{0: errA, 1: errors.New("dropped"), 2: errC}}
	comp := format.Compression{Method: format.Deflate, Level: DefaultLevel}
	ref.keep(&format.Manifest{Compression: &comp}, comp)
	if len(ref.files) != 2 || ref.files[0].size != 1 || ref.files[1].size != 3 {
		t.Fatalf("files kept: %+v", ref.files)
	}
	if len(ref.damage) != 2 || ref.damage[0] != errA || ref.damage[1] != errC {
		t.Errorf("damage after keep: %v, want a at 0 and c at 1", ref.damage)
	}
	other := format.Compression{Method: format.Deflate, Level: 1}
	ref.keep(&format.Manifest{Compression: &other}, comp)
	if ref.files != nil || ref.damage != nil {
		t.Errorf("another compression kept %d files and %d damages", len(ref.files), len(ref.damage))
	}
}
