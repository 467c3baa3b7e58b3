package backupset

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"backup/format"
)

func TestActivate(t *testing.T) {
	okVerify := func(string) error { return nil }
	tests := []struct {
		name            string
		status          format.Status
		allowIncomplete bool
		verify          Verifier
		damage          func(t *testing.T, dir string)
		want            string // error; "" when B is activated
	}{
		{"complete and verified", format.Complete, false, okVerify, nil, ""},
		{"verify fails", format.Complete, false, func(string) error { return errors.New("app/x: crc mismatch") }, nil, "app/x: crc mismatch"},
		{"incomplete", format.Incomplete, false, okVerify, nil, "the backup is incomplete"},
		{"incomplete allowed", format.Incomplete, true, okVerify, nil, ""},
		{"receipt does not match", format.Complete, false, okVerify, func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, nameB), "grown since the receipt was written")
		}, "its receipt says"},
		{"archive missing", format.Complete, false, okVerify, func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, nameB))
		}, "the archive is missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := twoRuns(t)
			writeRun(t, dir, fakeRun{nameB, tt.status, t0.Add(time.Hour)})
			if tt.damage != nil {
				tt.damage(t, dir)
			}
			var verified string
			verify := func(path string) error { verified = path; return tt.verify(path) }
			l, err := Acquire(t.Context(), Folder{dir}, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Release()
			err = l.Activate(t.Context(), nameB, tt.allowIncomplete, verify)
			wantLatest := nameB
			if tt.want != "" {
				wantLatest = nameA
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("Activate: %v, want %q", err, tt.want)
				}
			} else if err != nil || verified != nameB {
				t.Errorf("Activate: %v, verified %q; want success after verifying B", err, verified)
			}
			assertPointer(t, dir, wantLatest)
		})
	}
}

func assertPointer(t *testing.T, dir, want string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, LatestName))
	if err != nil || string(data) != want+"\n" {
		t.Errorf("LATEST holds %q, %v; want %q", data, err, want+"\n")
	}
}

// TestActivateKilled kills (SIGKILL) a process in the middle of Activate, after the new
// archive and its receipt are in place and while it is being verified: LATEST stays on the
// previous archive, the kernel releases the lock, and the next activation works.
func TestActivateKilled(t *testing.T) {
	if dir := os.Getenv("BACKUPSET_TEST_ACTIVATE_DIR"); dir != "" {
		activateSlowly(dir)
		return
	}
	dir := twoRuns(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestActivateKilled$")
	cmd.Env = append(os.Environ(), "BACKUPSET_TEST_ACTIVATE_DIR="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(dir, "verifying")
	for deadline := time.Now().Add(30 * time.Second); !exists(marker); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the helper never started verifying")
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	assertPointer(t, dir, nameA)
	if e, err := Latest(t.Context(), Folder{dir}); err != nil || e.Name != nameA {
		t.Errorf("Latest after the kill: %s, %v; want %s", e.Name, err, nameA)
	}
	l, err := Acquire(t.Context(), Folder{dir}, 0)
	if err != nil {
		t.Fatalf("the killed process's lock was not released: %v", err)
	}
	defer l.Release()
	if err := l.Activate(t.Context(), nameB, false, func(string) error { return nil }); err != nil {
		t.Fatal(err)
	}
	assertPointer(t, dir, nameB)
}

// activateSlowly is the helper process of TestActivateKilled: it activates B with a
// verifier that signals and then hangs until killed.
func activateSlowly(dir string) {
	l, err := Acquire(context.Background(), Folder{dir}, 0)
	if err != nil {
		os.Exit(2)
	}
	l.Activate(context.Background(), nameB, false, func(string) error {
		os.WriteFile(filepath.Join(dir, "verifying"), nil, 0o644)
		time.Sleep(time.Minute)
		return nil
	})
	os.Exit(3)
}

// TestActivateLostRace moves LATEST behind the lock holder's back, after it read the
// pointer: Activate must not overwrite the other writer's pointer.
func TestActivateLostRace(t *testing.T) {
	tests := []struct {
		name  string
		start func(t *testing.T, dir string) // the set as the lock holder finds it
		other string                         // what the other writer puts in LATEST
	}{
		{"LATEST moved", func(t *testing.T, dir string) {}, nameB},
		{"LATEST created", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, LatestName)) }, nameA},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := twoRuns(t)
			writeRun(t, dir, fakeRun{nameB, format.Complete, t0.Add(time.Hour)})
			tt.start(t, dir)
			l, err := Acquire(t.Context(), Folder{dir}, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Release()
			if _, err := l.Pointer(t.Context()); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(dir, ".other"), tt.other+"\n")
			if err := os.Rename(filepath.Join(dir, ".other"), filepath.Join(dir, LatestName)); err != nil {
				t.Fatal(err)
			}
			err = l.Activate(t.Context(), nameB, false, func(string) error { return nil })
			if err == nil || !strings.Contains(err.Error(), "moved by another writer") {
				t.Errorf("Activate: %v, want the lost race named", err)
			}
			assertPointer(t, dir, tt.other)
		})
	}
}

// TestActivateNeverMovesBack: a run that started before the run LATEST names (a clock set
// back, a receipt from a host whose clock is ahead) does not move LATEST; activate by hand
// still may.
func TestActivateNeverMovesBack(t *testing.T) {
	dir := twoRuns(t)
	writeFile(t, filepath.Join(dir, LatestName), nameB+"\n")
	l, err := Acquire(t.Context(), Folder{dir}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	err = l.Activate(t.Context(), nameA, false, func(string) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "started later") {
		t.Errorf("Activate of the older run: %v, want a refusal", err)
	}
	assertPointer(t, dir, nameB)
	if _, err := l.ActivateByHand(t.Context(), Activation{Archive: nameA, At: time.Now(), By: "activate"}, false, func(string) error { return nil }); err != nil {
		t.Errorf("ActivateByHand of the older run: %v", err)
	}
	assertPointer(t, dir, nameA)
}
