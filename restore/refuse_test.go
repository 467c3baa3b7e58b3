package restore

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRestoreRefused restores hostile archives: the restore is refused before anything is
// written, inside or outside the destination.
func TestRestoreRefused(t *testing.T) {
	tests := []struct {
		name    string
		entries []zent
		want    string
	}{
		{"dot-dot", []zent{{name: "ok", body: "x"}, {name: "../x", body: "evil"}}, `../x: unsafe name: ".." component`},
		{"dot-dot inside", []zent{{name: "a/../../x", body: "evil"}}, `a/../../x: unsafe name: ".." component`},
		{"absolute", []zent{{name: "/tmp/x", body: "evil"}}, "/tmp/x: unsafe name: absolute"},
		{"backslash from DOS", []zent{{name: `..\x`, body: "evil", dos: true}}, `..\x: unsafe name: contains a backslash`},
		{"drive letter from DOS", []zent{{name: "C:/x", body: "evil", dos: true}}, "C:/x: unsafe name: starts with a drive letter"},
		{"symlink then file through it", []zent{{name: "l", body: "..", symlink: true}, {name: "l/x", body: "evil"}},
			"l/x: unsafe name: below l, a symlink entry"},
		{"duplicate", []zent{{name: "a", body: "1"}, {name: "a", body: "2"}}, "a: duplicate name"},
		{"file and dir", []zent{{name: "a", body: "1"}, {name: "a/"}}, "a/: duplicate name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()
			dest := filepath.Join(parent, "d1", "dest")
			plan, res := restoreInto(t, buildZip(t, tt.entries, false), dest, Options{Force: true})
			if res != nil {
				t.Fatal("restore ran, want it refused")
			}
			if got := problemStrings(plan.Refused); !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, tt.want) }) {
				t.Errorf("refused %q, want %q", got, tt.want)
			}
			if got := listTree(t, parent); len(got) != 0 {
				t.Errorf("written: %q, want nothing", got)
			}
		})
	}
}

// TestRestoreThroughDestSymlink restores into a destination where a folder the archive holds
// is a symlink to elsewhere: refused, and nothing lands where the link points.
func TestRestoreThroughDestSymlink(t *testing.T) {
	for _, link := range []string{"app", "app/sub"} {
		t.Run(link, func(t *testing.T) {
			dest, outside := t.TempDir(), t.TempDir()
			os.MkdirAll(filepath.Join(dest, filepath.Dir(link)), 0o755)
			if err := os.Symlink(outside, filepath.Join(dest, link)); err != nil {
				t.Fatal(err)
			}
			plan, res := restoreInto(t, buildZip(t, sampleTree, true), dest, Options{Force: true})
			if res != nil {
				t.Fatal("restore ran, want it refused")
			}
			want := "a symlink in the destination"
			if got := problemStrings(plan.Refused); len(got) == 0 || !strings.Contains(got[0], want) {
				t.Errorf("refused %q, want %q", got, want)
			}
			if got := listTree(t, outside); len(got) != 0 {
				t.Errorf("written through the link: %q", got)
			}
		})
	}
}

// TestRestoreSymlinkSwappedIn swaps a folder for a symlink after the plan was made: the file
// below it fails, and nothing is written where the link points.
func TestRestoreSymlinkSwappedIn(t *testing.T) {
	dest, outside := t.TempDir(), t.TempDir()
	r := openZip(t, buildZip(t, []zent{{name: "a/b/c", body: "x"}}, true))
	plan, err := NewPlan(t.Context(), r, dest, Options{})
	if err != nil || !plan.OK() {
		t.Fatalf("plan: %v %q", err, problemStrings(plan.Refused))
	}
	os.Mkdir(filepath.Join(dest, "a"), 0o755)
	os.Symlink(outside, filepath.Join(dest, "a/b"))
	res, err := plan.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := problemStrings(res.Failed); len(got) != 1 || !strings.Contains(got[0], "a/b is a symlink or not a directory") {
		t.Errorf("failed %q, want a/b/c failed through the symlink", got)
	}
	if got := listTree(t, outside); len(got) != 0 {
		t.Errorf("written through the link: %q", got)
	}
}

func TestRestoreConflicts(t *testing.T) {
	entries := []zent{{name: "app/a.txt", body: "new"}, {name: "app/b.txt", body: "bee"}}
	data := buildZip(t, entries, true)
	setup := func(t *testing.T) (dest, outside string) {
		dest, outside = t.TempDir(), filepath.Join(t.TempDir(), "outside")
		os.Mkdir(filepath.Join(dest, "app"), 0o755)
		os.WriteFile(outside, []byte("outside"), 0o644)
		// A hard link to a file outside: replacing it must not write through it.
		if err := os.Link(outside, filepath.Join(dest, "app/a.txt")); err != nil {
			t.Fatal(err)
		}
		return dest, outside
	}
	t.Run("without force", func(t *testing.T) {
		dest, _ := setup(t)
		plan, res := restoreInto(t, data, dest, Options{})
		if res != nil || !slices.Equal(plan.Conflicts, []string{"app/a.txt"}) {
			t.Fatalf("conflicts %q (ran %v), want app/a.txt and a refusal", plan.Conflicts, res != nil)
		}
		if _, err := os.Lstat(filepath.Join(dest, "app/b.txt")); err == nil {
			t.Error("app/b.txt written by a refused restore")
		}
	})
	t.Run("with force", func(t *testing.T) {
		dest, outside := setup(t)
		_, res := restoreInto(t, data, dest, Options{Force: true})
		if res == nil || res.Files != 2 {
			t.Fatalf("result %+v, want 2 files", res)
		}
		if got, _ := os.ReadFile(filepath.Join(dest, "app/a.txt")); string(got) != "new" {
			t.Errorf("app/a.txt = %q, want new", got)
		}
		if got, _ := os.ReadFile(outside); string(got) != "outside" {
			t.Errorf("the hard-linked file outside changed to %q", got)
		}
	})
	t.Run("type clashes refuse even with force", func(t *testing.T) {
		dest := t.TempDir()
		os.MkdirAll(filepath.Join(dest, "app/a.txt"), 0o755)
		os.WriteFile(filepath.Join(dest, "app/sub"), nil, 0o644)
		clash := buildZip(t, []zent{{name: "app/a.txt", body: "x"}, {name: "app/sub/"}, {name: "app/sub/f", body: "y"}}, true)
		plan, res := restoreInto(t, clash, dest, Options{Force: true})
		want := []string{"app/a.txt: exists in the destination as a directory, " + neverReplaced,
			"app/sub/: exists in the destination and is not a directory, " + neverReplaced,
			"app/sub/f: would pass through app/sub, which is not a directory in the destination"}
		if res != nil || !slices.Equal(problemStrings(plan.Refused), want) {
			t.Errorf("refused %q, want %q", problemStrings(plan.Refused), want)
		}
	})
}
