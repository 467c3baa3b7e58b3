package format

import (
	"bytes"
	"testing"
	"time"
)

func TestManifestWriteToMatchesMarshal(t *testing.T) {
	meta := &Meta{UID: 1000, GID: 4294967295, MtimeNsec: 999999999, CtimeNsec: -5, Ino: 1 << 63, Dev: 66306,
		User: "ü<s>&", Group: "g\xff\u2028\u2029",
		Xattrs: map[string][]byte{"user.b": {0, 1, 0xff}, "user.a": nil, "security.\"<c>\"": {}, "user.\x01": []byte("x")}}
	full := &Manifest{
		ToolVersion: "1.0",
		Status:      "complete",
		Files: []File{
			{Path: "a/b", Size: 3, SHA256: Digest{0xab}},
			{Path: "a/ü\"c\\<d>&e\n\t\r\b\f\x01\x1f\x7f\u2028\u2029", Size: 0, SHA256: Digest{1}},
			{Path: "a/\xff", SHA256: Digest{2}, Link: -3, RawSHA256: &Digest{31: 9}},
			{Path: "a/caf\xe9\u2028", Size: 1 << 62, SHA256: Digest{3}, Link: 7, Meta: meta, RawSHA256: &Digest{4}},
			{Path: "a/db", Size: 4, SHA256: Digest{5}, Meta: &Meta{Xattrs: map[string][]byte{}}, Reused: true,
				Snapshot: &CopySource{Kind: "sqlite", Size: 8, ModTime: time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 3600))}},
		},
		Dirs:        []Dir{{Path: "a", Meta: *meta}, {Path: "a/\xfe\xfd"}, {Path: "a/<d>"}},
		Symlinks:    []Symlink{{Path: "a/l", Target: "../\xff", Meta: Meta{UID: 1}}},
		Compression: &Compression{Method: Zstd, Level: 3},
		Skipped:     []Skipped{{Path: "a/s", Kind: "socket"}},
		Excluded:    []Excluded{{Path: "a/x\x80", Rule: "*"}},
		Warnings:    []Warning{{Path: "a/w", Op: "read", Error: "boom", Lost: true}},
		Created:     []Created{{Path: "a/n", Type: CreatedFile, Size: 1, SHA256: goodSum}},
	}
	for name, m := range map[string]*Manifest{
		"full":      full,
		"no dirs":   {Status: "complete", Files: full.Files[:2], Dirs: []Dir{}, Symlinks: full.Symlinks},
		"only dirs": {Status: "complete", Dirs: full.Dirs[1:]},
		"no files":  {Status: "complete", Files: []File{}},
		"nil":       {},
	} {
		t.Run(name, func(t *testing.T) {
			want, err := MarshalManifest(cloneManifest(m))
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			n, err := cloneManifest(m).WriteTo(&got)
			if err != nil {
				t.Fatal(err)
			}
			if n != int64(got.Len()) {
				t.Errorf("WriteTo says it wrote %d bytes, wrote %d", n, got.Len())
			}
			// One line break before each record and before each list's end; none elsewhere.
			if breaks, records := bytes.Count(got.Bytes(), []byte("\n")), recordLines(m); breaks != records {
				t.Errorf("WriteTo wrote %d line breaks, want %d:\n%s", breaks, records, got.String())
			}
			if joined := bytes.ReplaceAll(got.Bytes(), []byte("\n"), nil); string(joined) != string(want) {
				t.Errorf("WriteTo wrote\n%s\nwant, but for line breaks,\n%s", got.String(), want)
			}
		})
	}
}

// recordLines is how many line breaks WriteTo writes for m: one before each file and dir
// record, and one before the end of each of those lists that is not empty.
func recordLines(m *Manifest) int {
	n := len(m.Files) + len(m.Dirs)
	for _, l := range []int{len(m.Files), len(m.Dirs)} {
		if l > 0 {
			n++
		}
	}
	return n
}

func cloneManifest(m *Manifest) *Manifest {
	c := *m
	return &c
}
