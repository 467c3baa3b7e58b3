package backupset

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

// TestFindSets: a folder is a set by its LATEST or its lock; runs alone make one only where
// byRuns says so (a bucket); nested sets are found each on its own, and files deeper than a
// set's folder are not its files.
func TestFindSets(t *testing.T) {
	files := []Object{
		{Name: "hosts/a/LATEST"}, {Name: "hosts/a/" + nameA}, {Name: "hosts/a/" + nameA + ".receipt.json"},
		{Name: "hosts/a/sub/LATEST"}, {Name: "hosts/a/sub/" + nameB},
		{Name: "hosts/b/.backup.lock"},
		{Name: "attic/" + nameA}, {Name: "attic/" + nameA + ".receipt.json"},
		{Name: "notes.txt"},
	}
	names := func(found []Found) string {
		var s []string
		for _, f := range found {
			s = append(s, f.Dir)
		}
		return strings.Join(s, " ")
	}
	if got, want := names(FindSets(files, false)), "hosts/a hosts/a/sub hosts/b"; got != want {
		t.Errorf("folder sets: %q, want %q", got, want)
	}
	found := FindSets(files, true)
	if got, want := names(found), "attic hosts/a hosts/a/sub hosts/b"; got != want {
		t.Errorf("bucket sets: %q, want %q", got, want)
	}
	for _, f := range found {
		for _, o := range f.Files {
			if strings.Contains(o.Name, "/") {
				t.Errorf("set %q holds %q: a file of a deeper folder", f.Dir, o.Name)
			}
		}
		if f.Dir == "hosts/a" && len(f.Files) != 3 {
			t.Errorf("set hosts/a holds %v, want its 3 files", f.Files)
		}
	}
}

// countingStore counts the requests a store is asked to make.
type countingStore struct {
	Store
	lists, stats, reads atomic.Int32
}

func (c *countingStore) List(ctx context.Context) ([]Object, error) {
	c.lists.Add(1)
	return c.Store.List(ctx)
}

func (c *countingStore) Stat(ctx context.Context, name string) (Object, error) {
	c.stats.Add(1)
	return c.Store.Stat(ctx, name)
}

func (c *countingStore) ReadFile(ctx context.Context, name string, limit int64) ([]byte, string, error) {
	c.reads.Add(1)
	return c.Store.ReadFile(ctx, name, limit)
}

// TestOverlook reads sets from a listing: two reads (LATEST and its archive's receipt) and
// nothing else for a healthy set (a third, of LATEST again, for a target found wrong), none for a set without LATEST, LATEST checked as every
// reader checks it, and an archive that the listing lacks (LATEST moved since) looked up.
func TestOverlook(t *testing.T) {
	tests := []struct {
		name       string
		setup      func(t *testing.T, dir string)
		drop       string // a file left out of the listing
		want       string // LATEST's target, or the error's text
		runs       int
		reads      int32
		stats      int32
		noBackupOK bool
	}{
		{name: "healthy", want: nameA, runs: 2, reads: 2},
		{name: "moved since the listing", drop: nameA, want: nameA, runs: 2, reads: 2, stats: 1},
		{name: "no LATEST", setup: func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, LatestName)) },
			want: "is missing, but the set holds 2 runs", runs: 2},
		{name: "empty", setup: func(t *testing.T, dir string) {
			for _, n := range listDir(t, dir) {
				os.Remove(filepath.Join(dir, n))
			}
		}, noBackupOK: true},
		{name: "damaged pointer", setup: pointer("../x\n"), want: "holds a /", runs: 2, reads: 1},
		// A target found wrong costs one more read of LATEST: had it moved, a run would
		// have moved it meanwhile (and pruned the old target), and the new one is read.
		{name: "target missing", setup: func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, nameA)) },
			want: "the archive is missing", runs: 2, reads: 3, stats: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := twoRuns(t)
			if tt.setup != nil {
				tt.setup(t, dir)
			}
			files, err := Folder{dir}.List(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			files = slices.DeleteFunc(files, func(o Object) bool { return o.Name == tt.drop })
			st := &countingStore{Store: Folder{dir}}
			ov := Overlook(t.Context(), st, files)
			got := ""
			switch {
			case ov.LatestErr != nil:
				got = ov.LatestErr.Error()
			case ov.Latest != nil:
				got = ov.Latest.Name
			}
			switch {
			case tt.noBackupOK && !errors.Is(ov.LatestErr, ErrNoBackup):
				t.Errorf("got %q, want ErrNoBackup", got)
			case !tt.noBackupOK && !strings.Contains(got, tt.want):
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if ov.Runs != tt.runs {
				t.Errorf("runs %d, want %d", ov.Runs, tt.runs)
			}
			if st.reads.Load() != tt.reads || st.stats.Load() != tt.stats || st.lists.Load() != 0 {
				t.Errorf("%d reads, %d stats, %d lists; want %d reads, %d stats and no list", st.reads.Load(), st.stats.Load(), st.lists.Load(), tt.reads, tt.stats)
			}
		})
	}
}

// TestListFolderTree lists below a symlinked root, never following a symlink inside it.
func TestListFolderTree(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "sets", "a")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeRun(t, dir, fakeRun{nameA, "complete", t0})
	writeFile(t, filepath.Join(dir, LatestName), nameA+"\n")
	if err := os.Symlink(root, filepath.Join(root, "sets", "loop")); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(filepath.Join(root, "sets"), link); err != nil {
		t.Fatal(err)
	}
	files, errs, err := ListFolderTree(link)
	if err != nil || len(errs) > 0 {
		t.Fatal(err, errs)
	}
	var names []string
	for _, f := range files {
		names = append(names, f.Name)
		if f.Name == "loop" && f.NotRegular == "" {
			t.Errorf("the symlink is listed as a regular file")
		}
	}
	slices.Sort(names)
	want := []string{"a/LATEST", "a/" + nameA, "a/" + nameA + ".receipt.json", "loop"}
	if !slices.Equal(names, want) {
		t.Errorf("listed %q, want %q", names, want)
	}
	if _, _, err := ListFolderTree(filepath.Join(root, "missing")); err == nil {
		t.Error("a missing root listed without error")
	}
}
