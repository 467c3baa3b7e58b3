package archive

import (
	"encoding/binary"
	"io/fs"
	"testing"
	"testing/fstest"
	"time"
)

func TestSetModified(t *testing.T) {
	tests := []struct {
		name            string
		mtime           time.Time
		dosDate, dosTim uint16
		ext             int32
	}{
		{"ordinary", time.Date(2026, 11, 29, 3, 4, 6, 0, time.UTC), 46<<9 | 11<<5 | 29, 3<<11 | 4<<5 | 3, 1795921446},
		{"before 1980 clamps DOS", time.Date(1975, 6, 1, 12, 0, 0, 0, time.UTC), 0<<9 | 1<<5 | 1, 0, 170856000},
		{"before 1970 is negative", time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC), 0<<9 | 1<<5 | 1, 0, -315619200},
		{"after 2107 clamps DOS", time.Date(2120, 1, 1, 0, 0, 0, 0, time.UTC), 127<<9 | 12<<5 | 31, 23<<11 | 59<<5 | 29, 1<<31 - 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fh := fileHeader("f", fileInfo(t, tt.mtime, 0o644), 8, 0, 0, 0, nil)
			if fh.ModifiedDate != tt.dosDate || fh.ModifiedTime != tt.dosTim {
				t.Errorf("DOS date/time %#x %#x, want %#x %#x", fh.ModifiedDate, fh.ModifiedTime, tt.dosDate, tt.dosTim)
			}
			if len(fh.Extra) != 9 || binary.LittleEndian.Uint16(fh.Extra) != extTimeID {
				t.Fatalf("extra %x, want one extended timestamp", fh.Extra)
			}
			if got := int32(binary.LittleEndian.Uint32(fh.Extra[5:])); got != tt.ext {
				t.Errorf("extended timestamp %d, want %d", got, tt.ext)
			}
		})
	}
}

func fileInfo(t *testing.T, mtime time.Time, mode fs.FileMode) fs.FileInfo {
	t.Helper()
	info, err := fs.Stat(fstest.MapFS{"f": {ModTime: mtime, Mode: mode}}, "f")
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func TestUTF8Flag(t *testing.T) {
	for name, want := range map[string]bool{"plain/ascii.txt": false, "naïve/café": true, "\xff-not-utf8": false} {
		fh := fileHeader(name, fileInfo(t, time.Now(), 0o644), 8, 0, 0, 0, nil)
		if got := fh.Flags&flagUTF8 != 0; got != want {
			t.Errorf("%q: UTF-8 flag %v, want %v", name, got, want)
		}
	}
}

func TestZip64Versions(t *testing.T) {
	info := fileInfo(t, time.Now(), 0o644)
	// Sizes known up front go in the local header; only zip64 sizes need the data descriptor,
	// since archive/zip writes no zip64 field into a local header.
	if fh := fileHeader("f", info, 8, 0, 10, 5<<30, nil); fh.ReaderVersion != zipVersion45 || fh.Flags&flagDataDesc == 0 {
		t.Errorf("5 GiB entry: reader version %d flags %#x, want %d with a data descriptor", fh.ReaderVersion, fh.Flags, zipVersion45)
	}
	if fh := fileHeader("f", info, 8, 0, 10, 10, nil); fh.ReaderVersion != zipVersion20 || fh.Flags&flagDataDesc != 0 {
		t.Errorf("small entry: reader version %d flags %#x, want %d without a data descriptor", fh.ReaderVersion, fh.Flags, zipVersion20)
	}
	if fh := fileHeader("f", info, MethodZstd, 0, 10, 10, nil); fh.ReaderVersion != zipVersion63 {
		t.Errorf("zstd entry: reader version %d, want %d", fh.ReaderVersion, zipVersion63)
	}
}
