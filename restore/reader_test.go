package restore

import (
	"archive/zip"
	"bytes"
	"slices"
	"testing"

	"backup/archive"
	"backup/format"
)

// TestReaderFindsManifest moves the manifest of a backup archive about, and adds entries
// it does not list: the manifest is found wherever it stands and never is an entry, what
// it does not list is damage, and "no manifest" is only for an archive with none.
func TestReaderFindsManifest(t *testing.T) {
	backup := buildZip(t, []zent{{name: "app/"}, {name: "app/a", body: "a"}}, true)
	injected := []zent{{name: "app/zz", body: "injected"}, {name: "app/zd/"}, {name: "app/l", body: "/", symlink: true}}
	tests := []struct {
		name         string
		order        []string // entries of backup or injected, in the order to store them
		wantManifest bool
		wantEntries  []string
		wantProblems []string
	}{
		{"last", []string{"app/", "app/a", format.ManifestName}, true, []string{"app/", "app/a"}, nil},
		// The folder would stand after the manifest (see "directory appended"): its record
		// finds it missing.
		{"first", []string{format.ManifestName, "app/a"}, true, []string{"app/a"},
			[]string{"app/: directory in the manifest but missing from the archive"}},
		{"file appended", []string{"app/", "app/a", format.ManifestName, "app/zz"}, true, []string{"app/", "app/a", "app/zz"},
			[]string{"app/zz: not in the manifest"}},
		{"file before it", []string{"app/", "app/zz", "app/a", format.ManifestName}, true, []string{"app/", "app/zz", "app/a"},
			[]string{"app/zz: not in the manifest"}},
		{"directory appended", []string{"app/", "app/a", format.ManifestName, "app/zd/"}, true, []string{"app/", "app/a", "app/zd/"},
			[]string{"app/zd/: not in the manifest", "app/zd/: directory entry after the manifest, which backup writes last"}},
		{"symlink appended", []string{"app/", "app/a", format.ManifestName, "app/l"}, true, []string{"app/", "app/a", "app/l"},
			[]string{"app/l: not in the manifest"}},
		{"two manifests", []string{"app/", "app/a", format.ManifestName, format.ManifestName}, true, []string{"app/", "app/a"},
			[]string{format.ManifestName + ": duplicate name"}},
		{"a directory of its name", []string{"app/", "app/a", format.ManifestName, format.ManifestName + "/"}, true, []string{"app/", "app/a"},
			[]string{format.ManifestName + ": duplicate name"}},
		{"only a directory of its name", []string{"app/", format.ManifestName + "/"}, true, []string{"app/"},
			[]string{format.ManifestName + ": a directory, not a manifest"}},
		{"none", []string{"app/", "app/a"}, false, []string{"app/", "app/a"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := openZip(t, arrange(t, backup, injected, tt.order))
			var names []string
			for _, e := range r.Entries {
				names = append(names, e.StoredName())
			}
			if r.HasManifest != tt.wantManifest || !slices.Equal(names, tt.wantEntries) {
				t.Errorf("manifest %v, entries %q; want %v, %q", r.HasManifest, names, tt.wantManifest, tt.wantEntries)
			}
			res, err := r.Verify(t.Context(), archive.VerifyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := problemStrings(res.Problems); !slices.Equal(got, tt.wantProblems) && len(got)+len(tt.wantProblems) > 0 {
				t.Errorf("problems %q, want %q", got, tt.wantProblems)
			}
			checkRestoreDamaged(t, r, len(tt.wantProblems) > 0)
		})
	}
}

// checkRestoreDamaged restores r: when damaged it must be refused or report damage, and no
// restore writes the manifest or anything the manifest does not list.
func checkRestoreDamaged(t *testing.T, r *archive.Reader, damaged bool) {
	t.Helper()
	dest := t.TempDir()
	plan, err := NewPlan(t.Context(), r, dest, Options{})
	if err != nil {
		if !damaged {
			t.Fatalf("NewPlan: %v", err)
		}
		return
	}
	res, err := plan.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := len(res.Damaged) > 0; got != damaged {
		t.Errorf("restore found damage %v (%q), want %v", got, problemStrings(res.Damaged), damaged)
	}
	for _, p := range listTree(t, dest) {
		if p == format.ManifestName || p == "app/zz" || p == "app/zd/" {
			t.Errorf("restore wrote %s", p)
		}
	}
}

// arrange writes the entries named in order, copied raw from the archive data or, when it
// lacks them, built from extra; a directory of the manifest's name is built on the spot.
func arrange(t *testing.T, data []byte, extra []zent, order []string) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	extraData := buildZip(t, extra, false)
	others, err := zip.NewReader(bytes.NewReader(extraData), int64(len(extraData)))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range order {
		f := findFile(zr, name)
		if f == nil {
			f = findFile(others, name)
		}
		switch {
		case f != nil:
			err = zw.Copy(f)
		case name == format.ManifestName+"/":
			_, err = zw.Create(name)
		default:
			t.Fatalf("no entry %s", name)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func findFile(zr *zip.Reader, name string) *zip.File {
	i := slices.IndexFunc(zr.File, func(f *zip.File) bool { return f.Name == name })
	if i < 0 {
		return nil
	}
	return zr.File[i]
}
