package restore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"backup/format"
)

// The adversarial pass over parallel restore (restore --jobs): what each worker does must
// keep every rule a single restore keeps, whatever the others do at the same time.

// TestForkedTreesAgreeOnFolders: the workers of one restore share what it knows of the
// folders it opened. Worker b finds d missing; before it makes d, worker a makes and opens
// it (foundMissing holds b there). Then d is left in place, or moved out of DEST, or moved
// out and replaced by a new folder. b must open a's folder in the first case, as a single
// worker would find it; in the others b must not make d again, nor take the new folder:
// its entry fails as moved, as a single worker's would.
func TestForkedTreesAgreeOnFolders(t *testing.T) {
	for _, tt := range []struct {
		name          string
		move, replace bool
	}{{"made meanwhile", false, false}, {"moved away", true, false}, {"replaced", true, true}} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			dest, away := filepath.Join(dir, "dest"), filepath.Join(dir, "away")
			if err := os.Mkdir(dest, 0o755); err != nil {
				t.Fatal(err)
			}
			root, err := openDestTree(dest, func(string) uint32 { return 0o755 }, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer root.close()
			a, b := root.fork(), root.fork()
			defer a.release()
			defer b.release()
			foundMissing = func(path string) {
				foundMissing = nil
				if _, err := a.dir("d", true); err != nil {
					t.Errorf("worker a: %v", err)
				}
				if !tt.move {
					return
				}
				if err := os.Rename(filepath.Join(dest, "d"), away); err != nil {
					t.Fatal(err)
				}
				if tt.replace {
					if err := os.Mkdir(filepath.Join(dest, "d"), 0o755); err != nil {
						t.Fatal(err)
					}
				}
			}
			defer func() { foundMissing = nil }()
			_, err = b.dir("d", true)
			switch {
			case !tt.move && err != nil:
				t.Errorf("worker b: %v; want a's folder opened", err)
			case tt.move && !errors.Is(err, errMoved):
				t.Errorf("worker b opened d: %v; want %v", err, errMoved)
			}
			if _, err := os.Lstat(filepath.Join(dest, "d")); tt.move && !tt.replace && err == nil {
				t.Errorf("d, moved out of DEST, was made again")
			}
		})
	}
}

// TestInterruptedSymlinkCounted: a symlink renamed into place as the run is interrupted is
// in DEST, so it is counted: the counts say exactly what DEST holds after an interrupt, as
// they do for files (the countdown lets the worker's own check pass, then reports the
// interrupt once the symlink is in place). Every worker restores a symlink this way; one
// entry is restored by one worker.
func TestInterruptedSymlinkCounted(t *testing.T) {
	data := buildLinkZip(t, []linkEntry{{name: "l", target: "/etc/passwd", owner: &format.Meta{}}},
		&format.Manifest{Files: []format.File{}, Symlinks: []format.Symlink{{Path: "l", Target: "/etc/passwd"}}})
	dest := t.TempDir()
	plan, err := NewPlan(t.Context(), openZip(t, data), dest, Options{Jobs: 4})
	if err != nil {
		t.Fatal(err)
	}
	ctx := &countdownCtx{Context: t.Context()}
	ctx.left.Store(1)
	res, err := plan.Run(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v, want context.Canceled", err)
	}
	inPlace := 0
	if _, err := os.Readlink(filepath.Join(dest, "l")); err == nil {
		inPlace = 1
	}
	if res.Symlinks != inPlace {
		t.Errorf("%d symlinks in DEST, the result counts %d", inPlace, res.Symlinks)
	}
}

// TestParallelRestoreUnderSwaps: while 8 workers restore, a goroutine moves the archive's
// folders out of DEST in a loop, leaving in their place a symlink to a folder outside, then
// nothing or a new folder. Nothing is ever written through the symlink; nothing this run
// made is left under a temp name, in DEST or in a folder moved out; the journal is gone;
// every file the result counts is in place whole (in DEST, or in a folder that left DEST
// between the last check and the rename, the window a single worker has too); and each
// file is restored, failed or damaged, once.
func TestParallelRestoreUnderSwaps(t *testing.T) {
	var entries []zent
	for i := range 160 {
		entries = append(entries, zent{name: fmt.Sprintf("app/d%d/s/f%03d", i%4, i), body: strings.Repeat("data ", i)})
	}
	data := buildZip(t, entries, true)
	want := map[string]string{}
	for _, e := range entries {
		want[baseOf(e.name)] = e.body
	}
	for iter := range 10 {
		dir := t.TempDir()
		dest, outside, target := filepath.Join(dir, "dest"), filepath.Join(dir, "outside"), filepath.Join(dir, "target")
		for _, d := range []string{dest, outside, target} {
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		plan, err := NewPlan(t.Context(), openZip(t, data), dest, Options{Jobs: 8})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		swapped := make(chan int)
		go func() {
			n := 0
			defer func() { swapped <- n }()
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				name := filepath.Join(dest, fmt.Sprintf("app/d%d", i%4))
				if i%8 >= 4 {
					name = filepath.Join(name, "s")
				}
				if os.Rename(name, filepath.Join(outside, fmt.Sprint(i))) != nil {
					runtime.Gosched()
					continue
				}
				n++
				os.Symlink(target, name)
				runtime.Gosched()
				os.Remove(name)
				if i%3 == 0 {
					os.Mkdir(name, 0o755)
				}
			}
		}()
		res, err := plan.Run(t.Context())
		close(done)
		n := <-swapped
		if err != nil {
			t.Fatalf("iteration %d: Run: %v", iter, err)
		}
		t.Logf("iteration %d: %d swaps, %d written, %d failed", iter, n, res.Files, len(res.Failed))
		if got := listTree(t, target); len(got) > 0 {
			t.Fatalf("iteration %d: written through a symlink, outside DEST: %q", iter, got)
		}
		files := 0
		for _, root := range []string{dest, outside} {
			for _, rel := range listTree(t, root) {
				base := filepath.Base(rel)
				switch {
				case strings.HasSuffix(rel, "/") || strings.HasSuffix(rel, "@"):
				case strings.Contains(base, ".restore-") || strings.HasPrefix(base, ".backup-restore-"):
					t.Errorf("iteration %d: %s left in %s", iter, rel, root)
				default:
					files++
					if got := string(readTestFile(t, filepath.Join(root, rel))); got != want[base] {
						t.Errorf("iteration %d: %s holds %d bytes, want %d", iter, rel, len(got), len(want[base]))
					}
				}
			}
		}
		if files != res.Files || res.Files+len(res.Failed)+len(res.Damaged) != len(entries) {
			t.Errorf("iteration %d (%d swaps): %d files in place, the result counts %d written, %d failed, %d damaged, of %d",
				iter, n, files, res.Files, len(res.Failed), len(res.Damaged), len(entries))
		}
	}
}

func readTestFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
