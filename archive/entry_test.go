package archive

import (
	"archive/zip"
	"bytes"
	"io/fs"
	"strings"
	"testing"
	"time"

	"backup/skiprules"
)

// TestModTimeRoundTrip writes headers as the Writer does and reads them back: dates before
// 1980 and before 1970 come back exact, which Go's reader alone gets wrong for the latter.
func TestModTimeRoundTrip(t *testing.T) {
	tests := []struct {
		name  string
		mtime time.Time
	}{
		{"ordinary", time.Date(2026, 11, 29, 3, 4, 6, 0, time.UTC)},
		{"odd second", time.Date(2026, 11, 29, 3, 4, 7, 0, time.UTC)},
		{"before 1980", time.Date(1975, 6, 1, 12, 0, 1, 0, time.UTC)},
		{"before 1970", time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"epoch", time.Unix(0, 0).UTC()},
		{"last 32-bit second", time.Unix(1<<31-1, 0).UTC()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			zw := zip.NewWriter(&buf)
			if _, err := zw.CreateRaw(fileHeader("f", fileInfo(t, tt.mtime, 0o640), zip.Store, 0, 0, 0, nil)); err != nil {
				t.Fatal(err)
			}
			zw.Close()
			r := openZip(t, buf.Bytes())
			e := r.Entries[0]
			if !e.Modified.Equal(tt.mtime) {
				t.Errorf("mtime %v, want %v", e.Modified, tt.mtime)
			}
			if e.Mode != 0o640 || e.IsDir || e.Kind != "" {
				t.Errorf("mode %v dir %v kind %q, want -rw-r----- file", e.Mode, e.IsDir, e.Kind)
			}
		})
	}
}

// TestModTimeGoWriter reads times that Go's zip writer stored: its extended timestamp is
// unsigned, so a date after 2038 reads as negative; the DOS date tells it apart.
func TestModTimeGoWriter(t *testing.T) {
	for _, mtime := range []time.Time{
		time.Date(2040, 5, 6, 7, 8, 10, 0, time.UTC),
		time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2024, 3, 4, 5, 6, 8, 0, time.UTC),
	} {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		if _, err := zw.CreateHeader(&zip.FileHeader{Name: "f", Modified: mtime}); err != nil {
			t.Fatal(err)
		}
		zw.Close()
		if got := openZip(t, buf.Bytes()).Entries[0].Modified; !got.Equal(mtime) {
			t.Errorf("mtime %v, want %v", got, mtime)
		}
	}
}

// TestModTimeFallback reads entries without the extended timestamp, or with one without
// its mtime: the DOS date stands, in the local zone. A timestamp field that runs past the
// end of the extra block is damage of the whole central directory, as Python's zipfile says.
func TestModTimeFallback(t *testing.T) {
	dos := time.Date(2001, 2, 3, 4, 5, 6, 0, time.Local)
	for name, c := range map[string]struct {
		extra   []byte
		refused bool
	}{
		"none":            {nil, false},
		"no mtime flag":   {[]byte{0x55, 0x54, 5, 0, 0, 1, 2, 3, 4}, false},
		"other field":     {[]byte{0x01, 0x99, 2, 0, 7, 7}, false},
		"cut short":       {[]byte{0x55, 0x54, 5, 0, 1, 0}, true},
		"size beyond end": {[]byte{0x55, 0x54, 0xff, 0xff, 1}, true},
	} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			zw := zip.NewWriter(&buf)
			fh := &zip.FileHeader{Name: "f", Method: zip.Store, Extra: c.extra}
			fh.ModifiedDate = uint16(dos.Day() + int(dos.Month())<<5 + (dos.Year()-1980)<<9)
			fh.ModifiedTime = uint16(dos.Second()/2 + dos.Minute()<<5 + dos.Hour()<<11)
			if _, err := zw.CreateRaw(fh); err != nil {
				t.Fatal(err)
			}
			zw.Close()
			r, err := NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
			switch {
			case c.refused:
				if err == nil || !strings.Contains(err.Error(), "has an extra field of") {
					t.Errorf("NewReader: %v, want the extra field refused", err)
				}
			case err != nil:
				t.Fatalf("NewReader: %v", err)
			case !r.Entries[0].Modified.Equal(dos):
				t.Errorf("mtime %v, want the DOS date %v", r.Entries[0].Modified, dos)
			}
		})
	}
}

func TestEntryTypes(t *testing.T) {
	tests := []struct {
		name     string
		mode     fs.FileMode
		wantName string
		wantType string
	}{
		{"a/file", 0o644, "a/file", "file"},
		{"a/dir/", fs.ModeDir | 0o750, "a/dir", "dir"},
		{"a/dir-by-mode", fs.ModeDir | 0o750, "a/dir-by-mode", "dir"},
		{"a/link", fs.ModeSymlink | 0o777, "a/link", string(skiprules.KindSymlink)},
		{"a/dev", fs.ModeDevice | fs.ModeCharDevice | 0o644, "a/dev", string(skiprules.KindDevice)},
		{"a/fifo", fs.ModeNamedPipe | 0o644, "a/fifo", string(skiprules.KindFIFO)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fh := &zip.FileHeader{Name: tt.name}
			fh.SetMode(tt.mode)
			e := newEntry(&zip.File{FileHeader: *fh})
			if e.Name != tt.wantName || e.Type() != tt.wantType {
				t.Errorf("name %q type %q, want %q %q", e.Name, e.Type(), tt.wantName, tt.wantType)
			}
		})
	}
}
