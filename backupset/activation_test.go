package backupset

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"backup/format"
)

// TestStatusWhy: status sees a newer complete backup than LATEST's target, and believes an
// activation record only while it names that target.
func TestStatusWhy(t *testing.T) {
	activated := func(name string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, ActivationName), `{"archive":"`+name+`","activated_at":"2026-03-02T00:00:00Z","by":"activate"}`)
		}
	}
	tests := []struct {
		name      string
		setup     func(t *testing.T, dir string)
		newer     string // "" for none
		activated string // the record believed; "" for none
	}{
		{"older LATEST, no record", nil, nameB, ""},
		{"older LATEST, activated", activated(nameA), nameB, nameA},
		{"stale record", activated(nameB), nameB, ""},
		{"damaged record", func(t *testing.T, dir string) { writeFile(t, filepath.Join(dir, ActivationName), "{") }, nameB, ""},
		{"LATEST is the newest", pointer(nameB + "\n"), "", ""},
		{"newest is incomplete", func(t *testing.T, dir string) {
			writeRun(t, dir, fakeRun{nameB, format.Incomplete, t0.Add(time.Hour)})
		}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := twoRuns(t)
			if tt.setup != nil {
				tt.setup(t, dir)
			}
			s, err := ReadStatus(t.Context(), Folder{dir})
			if err != nil {
				t.Fatal(err)
			}
			newer, act := "", ""
			if s.Newer != nil {
				newer = s.Newer.Name
			}
			if s.Activation != nil {
				act = s.Activation.Archive
			}
			if newer != tt.newer || act != tt.activated {
				t.Errorf("Newer %q, Activation %q; want %q, %q", newer, act, tt.newer, tt.activated)
			}
		})
	}
}

// TestActivateByHand moves LATEST and then writes the record; a refused activation writes
// neither.
func TestActivateByHand(t *testing.T) {
	dir := twoRuns(t)
	l, err := Acquire(t.Context(), Folder{dir}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	refuse := func(string) error { return os.ErrInvalid }
	if _, err := l.ActivateByHand(t.Context(), Activation{Archive: nameB, By: "activate"}, false, refuse); err == nil {
		t.Error("ActivateByHand with a failing verifier succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, ActivationName)); err == nil {
		t.Error("a refused activation wrote the record")
	}
	assertPointer(t, dir, nameA)
	ok := func(string) error { return nil }
	if _, err := l.ActivateByHand(t.Context(), Activation{Archive: nameB, By: "activate"}, false, ok); err != nil {
		t.Fatal(err)
	}
	assertPointer(t, dir, nameB)
	if a := l.CurrentActivation(t.Context()); a == nil || a.Archive != nameB {
		t.Errorf("CurrentActivation: %+v, want a record of %s", a, nameB)
	}
}

// TestAdoptResumes: an adoption killed after its receipt was written is completed under the
// same name; one whose archive is in the set already copies nothing.
func TestAdoptResumes(t *testing.T) {
	dir := twoRuns(t)
	content := []byte("archive adopted")
	started := t0.Add(2 * time.Hour)
	name := stamp("app", started)
	rc := &format.Receipt{Schema: format.ReceiptSchema, Status: format.Complete, StartedAt: started,
		Archive: &format.ArchiveInfo{Path: "/elsewhere/x.zip", Size: int64(len(content)), SHA256: sha256Hex(content)}}
	opened := 0
	a := Adoption{Receipt: rc, Source: "app", Archive: firstReads{bytes.NewReader(content), &opened}, Size: int64(len(content))}
	l, err := Acquire(t.Context(), Folder{dir}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	// What a kill between the receipt and the archive leaves.
	data, _ := (&format.Receipt{Schema: rc.Schema, Status: rc.Status, StartedAt: started,
		Archive: &format.ArchiveInfo{Path: filepath.Join(dir, name), Size: rc.Archive.Size, SHA256: rc.Archive.SHA256}}).Marshal()
	writeFile(t, filepath.Join(dir, name+format.ReceiptSuffix), string(data))
	for i, want := range []bool{false, true} {
		got, already, err := l.Adopt(t.Context(), a)
		if err != nil || got != name || already != want {
			t.Errorf("Adopt #%d: %q, already %v, %v; want %q, %v", i+1, got, already, err, name, want)
		}
	}
	if opened != 1 {
		t.Errorf("the archive was read %d times, want once", opened)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, name)); !bytes.Equal(got, content) {
		t.Errorf("the set's copy holds %q", got)
	}
	if files := listDir(t, dir); slices.ContainsFunc(files, func(f string) bool { return f[0] == '.' && f != LockName }) {
		t.Errorf("temp files left: %v", files)
	}
}

// firstReads counts the reads of r that start at its first byte: how many times it was read.
type firstReads struct {
	r     io.ReaderAt
	count *int
}

func (f firstReads) ReadAt(p []byte, off int64) (int, error) {
	if off == 0 {
		*f.count++
	}
	return f.r.ReadAt(p, off)
}
