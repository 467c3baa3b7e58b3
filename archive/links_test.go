package archive

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"os"
	"slices"
	"strings"
	"testing"

	"backup/format"
)

// linkEntry is an entry of an archive as backup writes one with --symlinks store: a
// symlink (target set) or a file or directory, each with its owner in a ux field.
type linkEntry struct {
	name, body string
	target     string       // a symlink's; its data is body when set, else the target
	owner      *format.Meta // nil: no ux field
}

// buildLinkZip writes entries and then the manifest m, as backup writes them.
func buildLinkZip(t *testing.T, entries []linkEntry, m *format.Manifest) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		fh := &zip.FileHeader{Name: e.name, Method: zip.Store, Modified: testTime}
		data := e.body
		switch {
		case e.target != "":
			fh.SetMode(os.ModeSymlink | 0o777)
			if data == "" {
				data = e.target
			}
		case strings.HasSuffix(e.name, "/"):
			fh.SetMode(os.ModeDir | 0o755)
		default:
			fh.SetMode(0o644)
		}
		if e.owner != nil {
			fh.Extra = addOwner(nil, e.owner)
		}
		w, err := zw.CreateHeader(fh)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(data))
	}
	m.ToolVersion, m.Status = "test", "complete"
	addManifest(t, zw, m)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func sumOf(s string) format.Digest { return format.Digest(sha256.Sum256([]byte(s))) }

// TestVerifyLinksAndOwners checks that verify holds symlink entries to the targets the
// manifest records, every ux owner to the manifest's, and finds what the manifest lists that
// the archive lacks.
func TestVerifyLinksAndOwners(t *testing.T) {
	root := &format.Meta{UID: 0, GID: 0}
	daemon := &format.Meta{UID: 1, GID: 1, User: "daemon", Group: "daemon"}
	dir := linkEntry{name: "app/", owner: root}
	file := linkEntry{name: "app/f", body: "data", owner: daemon}
	fileRecord := format.File{Path: "app/f", Size: 4, SHA256: sumOf("data"), Meta: daemon}
	dirRecord := []format.Dir{{Path: "app", Meta: *root}}
	tests := []struct {
		name     string
		entries  []linkEntry
		manifest format.Manifest
		want     []string
	}{
		{"faithful", []linkEntry{dir, file, {name: "app/l", target: "/etc", owner: root}},
			format.Manifest{Files: []format.File{fileRecord}, Dirs: dirRecord, Symlinks: []format.Symlink{{Path: "app/l", Target: "/etc", Meta: *root}}}, nil},
		{"other target of the same length", []linkEntry{dir, file, {name: "app/l", target: "/etc", body: "/usr", owner: root}},
			format.Manifest{Files: []format.File{fileRecord}, Dirs: dirRecord, Symlinks: []format.Symlink{{Path: "app/l", Target: "/etc", Meta: *root}}}, []string{"app/l: sha256 mismatch"}},
		{"other target", []linkEntry{dir, file, {name: "app/l", target: "/etc/x", owner: root}},
			format.Manifest{Files: []format.File{fileRecord}, Dirs: dirRecord, Symlinks: []format.Symlink{{Path: "app/l", Target: "/etc", Meta: *root}}}, []string{`app/l: symlink target of 6 bytes, the manifest says "/etc"`, "app/l: sha256 mismatch"}},
		{"symlink not listed", []linkEntry{file, {name: "app/l", target: "/etc", owner: root}},
			format.Manifest{Files: []format.File{fileRecord}}, []string{"app/l: not in the manifest"}},
		{"other owner", []linkEntry{{name: "app/f", body: "data", owner: root}},
			format.Manifest{Files: []format.File{fileRecord}}, []string{"app/f: owner 0:0, the manifest says 1:1"}},
		{"no owner field", []linkEntry{{name: "app/f", body: "data"}},
			format.Manifest{Files: []format.File{fileRecord}}, []string{"app/f: no owner field, the manifest records one"}},
		{"directory missing", []linkEntry{file},
			format.Manifest{Files: []format.File{fileRecord}, Dirs: dirRecord}, []string{"app/: directory in the manifest but missing from the archive"}},
		{"directory not listed", []linkEntry{dir, file},
			format.Manifest{Files: []format.File{fileRecord}}, []string{"app/: not in the manifest"}},
		{"directory not listed", []linkEntry{dir, file},
			format.Manifest{Files: []format.File{fileRecord}}, []string{"app/: not in the manifest"}},
		{"symlink missing", []linkEntry{file},
			format.Manifest{Files: []format.File{fileRecord}, Symlinks: []format.Symlink{{Path: "app/l", Target: "/etc"}}}, []string{"app/l: symlink in the manifest but missing from the archive"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := openZip(t, buildLinkZip(t, tt.entries, &tt.manifest))
			res, err := r.Verify(t.Context(), VerifyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := problemStrings(res.Problems); !slices.Equal(got, tt.want) {
				t.Errorf("problems %q, want %q", got, tt.want)
			}
		})
	}
}

// TestOwnerField reads back the ux field the writer adds, and refuses malformed ones.
func TestOwnerField(t *testing.T) {
	tests := []struct {
		name     string
		extra    []byte
		uid, gid uint32
		ok       bool
	}{
		{"written", addOwner(nil, &format.Meta{UID: 65534, GID: 42}), 65534, 42, true},
		{"after another field", addOwner([]byte{0x55, 0x54, 1, 0, 1}, &format.Meta{UID: 7, GID: 8}), 7, 8, true},
		{"two-byte ids", []byte{0x75, 0x78, 7, 0, 1, 2, 0xe8, 0x03, 2, 0x64, 0}, 1000, 100, true},
		{"none", nil, 0, 0, false},
		{"truncated", []byte{0x75, 0x78, 11, 0, 1, 4}, 0, 0, false},
		{"bad size", []byte{0x75, 0x78, 3, 0, 1, 9, 0}, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			uid, gid, ok := ownerField(tt.extra)
			if uid != tt.uid || gid != tt.gid || ok != tt.ok {
				t.Errorf("got %d, %d, %v; want %d, %d, %v", uid, gid, ok, tt.uid, tt.gid, tt.ok)
			}
		})
	}
}
