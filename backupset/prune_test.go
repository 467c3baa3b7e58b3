package backupset

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"backup/format"
)

// foreign are files in a set folder that are not the set's: prune never touches them.
var foreign = []string{"notes.txt", "app-latest.zip", "app-20260221T090000Z.zip.bak", "other.zip",
	"app-20250101T000000Z.zip.receipt.json.old", ".app-20260221T130000Z.zip.tmp-123", LockName}

// historySet lays out history on disk: each run's archive and receipt as backup create writes
// them (a failed run has only its receipt, an unknown one only its archive), foreign files,
// and LATEST.
func historySet(t *testing.T) (dir string, want []string) {
	t.Helper()
	dir = t.TempDir()
	runs, latest := historyRuns(t)
	for i, r := range runs {
		switch r.State {
		case Unknown:
			writeFile(t, filepath.Join(dir, r.Name), "an archive whose receipt is lost")
		case Failed:
			writeRun(t, dir, fakeRun{r.Name, format.Failed, r.Started})
		default:
			writeRun(t, dir, fakeRun{r.Name, format.Status(r.State), r.Started})
		}
		if reasons := history[i].reasons; reasons != "" && reasons != "superseded" {
			want = append(want, listDirOf(t, dir, r.Name)...)
		}
	}
	for _, name := range foreign {
		writeFile(t, filepath.Join(dir, name), "not the set's")
	}
	writeFile(t, filepath.Join(dir, LatestName), latest+"\n")
	want = append(want, foreign...)
	want = append(want, LatestName)
	slices.Sort(want)
	return dir, want
}

// listDirOf returns which of an archive's two files exist in dir.
func listDirOf(t *testing.T, dir, name string) []string {
	t.Helper()
	var names []string
	for _, n := range []string{name, name + format.ReceiptSuffix} {
		if exists(filepath.Join(dir, n)) {
			names = append(names, n)
		}
	}
	return names
}

func TestPrune(t *testing.T) {
	dir, want := historySet(t)
	before := listDir(t, dir)
	l, err := Acquire(t.Context(), Folder{dir}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()

	plan, err := l.Prune(t.Context(), historyPolicy, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := listDir(t, dir); !slices.Equal(got, before) {
		t.Errorf("a dry run changed the set:\n%v\nwas\n%v", got, before)
	}
	if len(plan) != 50 {
		t.Errorf("dry run planned %d runs, want 50", len(plan))
	}

	plan, err = l.Prune(t.Context(), historyPolicy, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := listDir(t, dir); !slices.Equal(got, want) {
		t.Errorf("after pruning the set holds\n%v\nwant\n%v", got, want)
	}
	deleted := 0
	for _, d := range plan {
		if !d.Keep {
			deleted++
		}
	}
	if deleted != 33 {
		t.Errorf("deleted %d runs, want 33", deleted)
	}

	// Pruning again with the same policy deletes nothing more.
	plan, err = l.Prune(t.Context(), historyPolicy, false)
	if err != nil || len(plan) != 17 || !slices.Equal(listDir(t, dir), want) {
		t.Errorf("second prune: %d runs, %v; want the 17 kept ones untouched", len(plan), err)
	}
}

// TestPruneRefusesBadLatest: with LATEST damaged in any way, prune deletes nothing.
func TestPruneRefusesBadLatest(t *testing.T) {
	for _, tt := range corruptions {
		t.Run(tt.name, func(t *testing.T) {
			dir := twoRuns(t)
			writeRun(t, dir, fakeRun{stamp("app", t0.Add(-48*time.Hour)), format.Complete, t0.Add(-48 * time.Hour)})
			tt.damage(t, dir)
			before := listDir(t, dir)
			l, err := Acquire(t.Context(), Folder{dir}, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Release()
			_, err = l.Prune(t.Context(), Policy{Last: 1}, false)
			if err == nil || !strings.Contains(err.Error(), "not pruning") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Prune: %v; want a refusal saying %q", err, tt.want)
			}
			after := listDir(t, dir)
			after = slices.DeleteFunc(after, func(n string) bool { return n == LockName })
			if !slices.Equal(after, before) {
				t.Errorf("files changed:\n%v\nwas\n%v", after, before)
			}
		})
	}
}

func TestPruneEmptySet(t *testing.T) {
	dir := t.TempDir()
	l, err := Acquire(t.Context(), Folder{dir}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if plan, err := l.Prune(t.Context(), Policy{Last: 1}, false); err != nil || len(plan) != 0 {
		t.Errorf("Prune of an empty set: %v, %v; want nothing to do", plan, err)
	}
}

// receiptStuck is a folder whose receipts cannot be deleted.
type receiptStuck struct{ Folder }

func (r receiptStuck) Delete(ctx context.Context, name, ifMatch string) error {
	if strings.HasSuffix(name, format.ReceiptSuffix) {
		return &fs.PathError{Op: "remove", Path: name, Err: syscall.EIO}
	}
	return r.Folder.Delete(ctx, name, ifMatch)
}

// TestPruneStoppedOnReceipt: a prune that deleted a run's archive and then failed on its
// receipt returns that run among those carried out, marked ReceiptLeft: the archive is gone,
// and the caller's count must say so.
func TestPruneStoppedOnReceipt(t *testing.T) {
	dir := twoRuns(t)
	writeFile(t, filepath.Join(dir, LatestName), nameB+"\n")
	l, err := Acquire(t.Context(), receiptStuck{Folder{dir}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	plan, err := l.Prune(t.Context(), Policy{Last: 1}, false)
	var left *ReceiptLeftError
	if !errors.As(err, &left) || !errors.Is(err, syscall.EIO) || left.Name != nameA {
		t.Errorf("Prune: %v; want a ReceiptLeftError for %s", err, nameA)
	}
	if len(plan) != 1 || plan[0].Name != nameA || plan[0].Keep || !plan[0].ReceiptLeft {
		t.Errorf("Prune carried out %+v; want %s deleted, its receipt left", plan, nameA)
	}
	if _, err := os.Stat(filepath.Join(dir, nameA)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s: %v; want it deleted", nameA, err)
	}
}
