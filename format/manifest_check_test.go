package format

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func checkManifest(files []string, symlinks []string) *Manifest {
	m := &Manifest{Schema: ManifestSchema, Status: string(Complete)}
	for _, p := range files {
		m.Files = append(m.Files, File{Path: p, SHA256: Digest{1}})
	}
	for _, p := range symlinks {
		m.Symlinks = append(m.Symlinks, Symlink{Path: p})
	}
	return m
}

// The check finds a path listed twice the same way whether the lists are sorted (no map of
// every name) or not (the map), and names the same path.
func TestCheckListedTwice(t *testing.T) {
	for _, tt := range []struct {
		files, symlinks []string
		want            string
	}{
		{[]string{"a", "b", "c"}, []string{"d"}, ""},
		{[]string{"a", "b", "b", "c"}, nil, `file "b" is listed twice`},
		{[]string{"b", "a", "b", "a"}, nil, `file "b" is listed twice`},
		{[]string{"a", "c"}, []string{"b", "c"}, `symlink "c" has no path or is listed twice`},
		{[]string{"c", "a"}, []string{"b", "c"}, `symlink "c" has no path or is listed twice`},
		{[]string{"a"}, []string{"b", "b"}, `symlink "b" has no path or is listed twice`},
		{[]string{"a"}, []string{"c", "b", "c"}, `symlink "c" has no path or is listed twice`},
		{[]string{"a", "", "a"}, nil, "a file has no path"},
	} {
		t.Run(strings.Join(tt.files, ",")+"|"+strings.Join(tt.symlinks, ","), func(t *testing.T) {
			got := ""
			if err := checkManifest(tt.files, tt.symlinks).check(); err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("check() = %q, want %q", got, tt.want)
			}
		})
	}
}

// A manifest as backup writes it, sorted, is checked without a map of its names: nearly no
// allocation at 100,000 files.
func TestCheckSortedAllocatesNothing(t *testing.T) {
	files := make([]string, 100_000)
	for i := range files {
		files[i] = fmt.Sprintf("d%03d/f%06d", i%1000, i)
	}
	m := checkManifest(nil, nil)
	m.Files = make([]File, 0, len(files))
	slices.Sort(files)
	for _, p := range files {
		m.Files = append(m.Files, File{Path: p, SHA256: Digest{1}})
	}
	if allocs := testing.AllocsPerRun(3, func() {
		if err := m.check(); err != nil {
			t.Fatal(err)
		}
	}); allocs > 4 {
		t.Errorf("check allocates %.0f times, want at most 4", allocs)
	}
}

// TestCheckMtimeNsec: an mtime_nsec that is no fraction of a second (which restore would
// pass over, giving whole seconds) is refused for files, folders and symlinks alike, and the
// two ends of the range are kept.
func TestCheckMtimeNsec(t *testing.T) {
	for _, tt := range []struct {
		nsec int
		want string
	}{
		{0, ""}, {999_999_999, ""},
		{1_000_000_000, "has mtime_nsec 1000000000, not a fraction of a second"},
		{-1, "has mtime_nsec -1, not a fraction of a second"},
	} {
		for kind, m := range map[string]*Manifest{
			`file "f"`:      {Files: []File{{Path: "f", SHA256: Digest{1}, Meta: &Meta{MtimeNsec: tt.nsec}}}},
			`directory "d"`: {Dirs: []Dir{{Path: "d", Meta: Meta{MtimeNsec: tt.nsec}}}},
			`symlink "l"`:   {Symlinks: []Symlink{{Path: "l", Target: "t", Meta: Meta{MtimeNsec: tt.nsec}}}},
		} {
			m.Schema, m.Status = ManifestSchema, string(Complete)
			got, want := "", ""
			if err := m.check(); err != nil {
				got = err.Error()
			}
			if tt.want != "" {
				want = kind + " " + tt.want
			}
			if got != want {
				t.Errorf("%s with mtime_nsec %d: check() = %q, want %q", kind, tt.nsec, got, want)
			}
		}
	}
}
