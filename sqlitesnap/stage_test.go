package sqlitesnap

import (
	"errors"
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"backup/eintr"
)

// TestStageLstatFailsLeavesNothing: the lstat that checks a new staged copy's name after its
// lock fails (EIO). That is no sign of a sweep: the run made another copy and left the first
// in $TMPDIR (eleven, had every lstat failed, with a false "removed before it was locked").
// Correct: the copy is removed and the error returned as it is (faults pass).
func TestStageLstatFailsLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	calls := 0
	lstatName = func(string, *unix.Stat_t) error { calls++; return unix.EIO }
	t.Cleanup(func() { lstatName = eintr.Lstat })
	f, forget, err := stageFile(dir)
	if err == nil {
		f.Close()
		forget()
		t.Fatal("stageFile succeeded, with the name unchecked")
	}
	if !errors.Is(err, unix.EIO) || calls != 1 {
		t.Errorf("stageFile: %v after %d lstats; want EIO after one", err, calls)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("the stage folder holds %v, want nothing", left)
	}
}

// TestStageSweptBeforeLockTriesAgain: a sweep removed the new copy between its create and
// its lock (the name is gone): the run makes another, and uses that one.
func TestStageSweptBeforeLockTriesAgain(t *testing.T) {
	dir := t.TempDir()
	calls := 0
	lstatName = func(name string, st *unix.Stat_t) error {
		calls++
		if calls == 1 {
			os.Remove(name)
			return unix.ENOENT
		}
		return eintr.Lstat(name, st)
	}
	t.Cleanup(func() { lstatName = eintr.Lstat })
	f, forget, err := stageFile(dir)
	if err != nil {
		t.Fatalf("stageFile: %v", err)
	}
	defer forget()
	defer f.Close()
	if left, _ := os.ReadDir(dir); len(left) != 1 || calls != 2 {
		t.Errorf("after %d lstats the stage folder holds %v, want the second copy only", calls, left)
	}
}
