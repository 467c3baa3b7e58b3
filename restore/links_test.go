package restore

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"backup/archive"
	"backup/eintr"
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

// TestRestoreSymlinks restores stored symlinks: created as they are, never followed (not
// one in DEST that --force replaces, not one just made), with their mtime; left out with
// SkipSymlinks; not created when their data is not the recorded target.
func TestRestoreSymlinks(t *testing.T) {
	root := &format.Meta{} // the owner the manifest records for each symlink, 0:0, in its ux field too
	entries := []linkEntry{{name: "app/", owner: root}, {name: "app/abs", target: "/etc/passwd", owner: root},
		{name: "app/up", target: "../../outside", owner: root}, {name: "app/f", body: "new"}}
	m := format.Manifest{Files: []format.File{{Path: "app/f", Size: 3, SHA256: sumOf("new")}}, Dirs: []format.Dir{{Path: "app"}},
		Symlinks: []format.Symlink{{Path: "app/abs", Target: "/etc/passwd"}, {Path: "app/up", Target: "../../outside"}}}
	data := buildLinkZip(t, entries, &m)

	t.Run("created", func(t *testing.T) {
		dest := t.TempDir()
		_, res := restoreInto(t, data, dest, Options{})
		if res.Symlinks != 2 || res.Files != 1 || len(res.Damaged)+len(res.Failed) > 0 {
			t.Fatalf("result %+v", res)
		}
		for name, want := range map[string]string{"app/abs": "/etc/passwd", "app/up": "../../outside"} {
			got, err := os.Readlink(filepath.Join(dest, name))
			if err != nil || got != want {
				t.Errorf("%s: %q, %v; want a symlink to %q", name, got, err, want)
			}
			info, _ := os.Lstat(filepath.Join(dest, name))
			if !info.ModTime().Equal(testTime) {
				t.Errorf("%s: mtime %v, want %v", name, info.ModTime(), testTime)
			}
		}
	})
	t.Run("skipped", func(t *testing.T) {
		dest := t.TempDir()
		plan, res := restoreInto(t, data, dest, Options{SkipSymlinks: true})
		if res.Symlinks != 0 || len(plan.Skipped) != 2 {
			t.Errorf("restored %d symlinks, skipped %v; want none and both", res.Symlinks, plan.Skipped)
		}
		if got := listTree(t, dest); !slices.Equal(got, []string{"app/", "app/f"}) {
			t.Errorf("restored %q", got)
		}
	})
	t.Run("replaces a link in DEST without following it", func(t *testing.T) {
		dir := t.TempDir()
		dest, outside := filepath.Join(dir, "dest"), filepath.Join(dir, "outside")
		os.WriteFile(outside, []byte("keep"), 0o644)
		os.MkdirAll(filepath.Join(dest, "app"), 0o755)
		os.Symlink(outside, filepath.Join(dest, "app/abs"))
		os.Symlink(outside, filepath.Join(dest, "app/f"))
		if plan, _ := restoreInto(t, data, dest, Options{}); !slices.Equal(plan.Conflicts, []string{"app/abs", "app/f"}) {
			t.Errorf("conflicts %q, want app/abs and app/f", plan.Conflicts)
		}
		_, res := restoreInto(t, data, dest, Options{Force: true})
		if res == nil || res.Symlinks != 2 {
			t.Fatalf("result %+v", res)
		}
		if got, _ := os.ReadFile(outside); string(got) != "keep" {
			t.Errorf("the file a link in DEST points to now holds %q", got)
		}
	})
	t.Run("wrong target", func(t *testing.T) {
		bad := buildLinkZip(t, []linkEntry{{name: "app/", owner: root}, {name: "app/abs", target: "/etc/passwd", body: "/etc/shadow", owner: root}},
			&format.Manifest{Files: []format.File{}, Dirs: []format.Dir{{Path: "app"}}, Symlinks: []format.Symlink{{Path: "app/abs", Target: "/etc/passwd"}}})
		dest := t.TempDir()
		_, res := restoreInto(t, bad, dest, Options{})
		if got := problemStrings(res.Damaged); !slices.Equal(got, []string{"app/abs: symlink target does not match the manifest"}) {
			t.Errorf("damaged %q", got)
		}
		if got := listTree(t, dest); !slices.Equal(got, []string{"app/"}) {
			t.Errorf("restored %q, want the folder alone", got)
		}
	})
	// Skipped, it is still checked as verify checks it (archive.Reader.CopyChecked): against
	// its recorded target, not only its CRC-32.
	t.Run("wrong target, skipped", func(t *testing.T) {
		bad := buildLinkZip(t, []linkEntry{{name: "app/", owner: root}, {name: "app/abs", target: "/etc/passwd", body: "/etc/shadow", owner: root}},
			&format.Manifest{Files: []format.File{}, Dirs: []format.Dir{{Path: "app"}}, Symlinks: []format.Symlink{{Path: "app/abs", Target: "/etc/passwd"}}})
		res, err := archive.Verify(t.Context(), writeZip(t, bad), archive.VerifyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		plan, _ := restoreInto(t, bad, t.TempDir(), Options{SkipSymlinks: true})
		for what, got := range map[string][]string{"verify": problemStrings(res.Problems), "restore plan": problemStrings(plan.Damaged)} {
			if !slices.Equal(got, []string{"app/abs: sha256 mismatch"}) {
				t.Errorf("%s: problems %q, want app/abs: sha256 mismatch", what, got)
			}
		}
	})
}

// buildLinkZipMode writes one file entry of the given mode and owner, then m.
func buildLinkZipMode(t *testing.T, name, body string, mode os.FileMode, owner *format.Meta, m *format.Manifest) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	fh := &zip.FileHeader{Name: name, Method: zip.Store, Modified: testTime}
	fh.SetMode(mode.Perm() | goSpecial(mode))
	fh.Extra = addOwner(nil, owner)
	w, err := zw.CreateHeader(fh)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte(body))
	m.ToolVersion, m.Status = "test", "complete"
	addManifest(t, zw, m)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// goSpecial turns the Unix setuid and setgid bits of mode into Go's.
func goSpecial(mode os.FileMode) os.FileMode {
	var m os.FileMode
	if mode&0o4000 != 0 {
		m |= os.ModeSetuid
	}
	if mode&0o2000 != 0 {
		m |= os.ModeSetgid
	}
	return m
}

// TestRestoreHardLinks makes each link group one file again, and where linking fails (as
// across file systems) leaves separate copies with a warning.
func TestRestoreHardLinks(t *testing.T) {
	entries := []linkEntry{{name: "app/"}, {name: "app/a", body: "same"}, {name: "app/sub/"}, {name: "app/sub/b", body: "same"},
		{name: "app/c", body: "other"}}
	m := format.Manifest{Files: []format.File{{Path: "app/a", Size: 4, SHA256: sumOf("same"), Link: 1},
		{Path: "app/sub/b", Size: 4, SHA256: sumOf("same"), Link: 1}, {Path: "app/c", Size: 5, SHA256: sumOf("other")}}}
	data := buildLinkZip(t, entries, &m)
	tests := []struct {
		name       string
		fail       error
		wantLinks  uint64
		wantWarned []string
	}{
		{"linked", nil, 2, nil},
		{"cross-device", unix.EXDEV, 1, []string{"app/sub/b: restored as a separate file, not a hard link of app/a: link: invalid cross-device link"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dest := t.TempDir()
			plan, err := NewPlan(t.Context(), openZip(t, data), dest, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if tt.fail != nil {
				plan.linkat = func(int, string, int, string, int, eintr.ID) error { return tt.fail }
			}
			res, err := plan.Run(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if got := problemStrings(res.Warnings); !slices.Equal(got, tt.wantWarned) {
				t.Errorf("warnings %q, want %q", got, tt.wantWarned)
			}
			for _, name := range []string{"app/a", "app/sub/b"} {
				var st unix.Stat_t
				if err := unix.Lstat(filepath.Join(dest, name), &st); err != nil {
					t.Fatal(err)
				}
				if got, _ := os.ReadFile(filepath.Join(dest, name)); uint64(st.Nlink) != tt.wantLinks || string(got) != "same" {
					t.Errorf("%s: %d links, content %q; want %d and %q", name, st.Nlink, got, tt.wantLinks, "same")
				}
			}
			if got := listTree(t, dest); !slices.Equal(got, []string{"app/", "app/a", "app/c", "app/sub/", "app/sub/b"}) {
				t.Errorf("restored %q (no temp file may stay)", got)
			}
		})
	}
}
