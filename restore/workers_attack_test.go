package restore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"backup/format"
)

// The adversarial pass over parallel restore (restore --jobs): what each worker does must
// keep every rule a single restore keeps, whatever the others do at the same time.

// TestForkedTreesAgreeOnFolders: the workers of one restore share what it knows of the
// folders it opened. A folder that one worker opened and that is then moved out of DEST, or
// replaced, is not made again or taken in its new form by another worker that looked it up
// before the first had noted it: that worker's entry fails as moved, as a single worker's
// would. beforeOpenChild holds the second worker between its look-up and its open.
func TestForkedTreesAgreeOnFolders(t *testing.T) {
	for _, tt := range []struct {
		name    string
		replace bool // a new folder put at the name, rather than none
	}{{"moved away", false}, {"replaced", true}} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			dest, away := filepath.Join(dir, "dest"), filepath.Join(dir, "away")
			if err := os.Mkdir(dest, 0o755); err != nil {
				t.Fatal(err)
			}
			root, err := openDestTree(dest, func(string) uint32 { return 0o755 })
			if err != nil {
				t.Fatal(err)
			}
			defer root.close()
			a, b := root.fork(), root.fork()
			defer a.release()
			defer b.release()
			beforeOpenChild = func(path string) {
				beforeOpenChild = nil
				if _, err := a.dir("d", true); err != nil {
					t.Errorf("worker a: %v", err)
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
			defer func() { beforeOpenChild = nil }()
			_, err = b.dir("d", true)
			if !errors.Is(err, errMoved) {
				t.Errorf("worker b opened d: %v; want %v", err, errMoved)
			}
			if _, err := os.Lstat(filepath.Join(dest, "d")); !tt.replace && err == nil {
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
	data := buildLinkZip(t, []linkEntry{{name: "l", target: "/etc/passwd"}},
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
