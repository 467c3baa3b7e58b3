package main

import (
	"archive/zip"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAttackRestoreDeepNameMemory: a zip name may be 65,535 bytes, so one entry can sit
// 32,000 folders deep (d/d/…/f). Restore opens such a path one folder at a time, as
// restore.md says, but it kept the full name of every folder on the way (each a copy of
// the path so far), so one entry cost memory in the square of its depth: a 120 KB archive
// of one such entry took 940 MB, and a 600 KB archive of five 4.7 GB, so that a few MB of
// archive could exhaust any machine; the test's one entry 24,000 deep took 606 MiB.
// Correct behaviour: memory in proportion to the names, well under 250 MB here.
func TestAttackRestoreDeepNameMemory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch := filepath.Join(dir, "deep.zip")
	writeDeepZip(t, arch, []string{"a"}, 24000)
	dest := filepath.Join(dir, "dest")
	t.Cleanup(func() { removeDeep(t, dest) })
	// runMeasured takes the peak of the restore alone: started by this test process, the
	// restore would be given the test's own peak (340 and 515 MiB in loaded full runs, which
	// a soft GOMEMLIMIT here was once thought to keep down).
	code, output, rss := runMeasured(t, dir, "restore", "-q", "--jobs", "1", arch, dest)
	if code != exitComplete {
		t.Fatalf("restore exited %d\n%.600s", code, output)
	}
	const limit = 250 << 20
	// The race detector's binary takes memory of its own (as in TestAttackManifestBomb).
	if !raceEnabled && rss > limit {
		t.Errorf("restore of an entry 24000 folders deep peaked at %d MiB; want under %d MiB", rss>>20, limit>>20)
	}
}

// removeDeep removes the tree at dir by moving each folder's contents up into dir before
// removing the folder: Go's os.RemoveAll (t.TempDir's clean-up) runs out of descriptors
// in a tree 32,000 folders deep, and rm -rf takes seconds.
func removeDeep(t *testing.T, dir string) {
	t.Helper()
	for n := 0; ; {
		entries, err := os.ReadDir(dir)
		if err != nil || len(entries) == 0 {
			os.Remove(dir)
			return
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			children, _ := os.ReadDir(p)
			for _, c := range children {
				n++
				os.Rename(filepath.Join(p, c.Name()), filepath.Join(dir, fmt.Sprint("up", n)))
			}
			os.Remove(p)
		}
	}
}

// writeDeepZip writes a zip at path of one file per top folder, each depth folders
// below it (top/d/d/…/f).
func writeDeepZip(t *testing.T, path string, tops []string, depth int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zw := zip.NewWriter(f)
	for _, top := range tops {
		fh := &zip.FileHeader{Name: top + "/" + strings.Repeat("d/", depth) + "f", Method: zip.Store}
		fh.SetMode(0o644)
		w, err := zw.CreateHeader(fh)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte("hi"))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestAttackVerifyDeepTreeTime: create of a tree 8,000 folders deep writes an entry for
// each folder, each named by its whole path (a 124 MB archive in 2.4 s), and verify of it
// took 19 s, restore as long before writing anything: checking that no entry lies below a
// file looked up every folder above each entry by name, hashing and comparing each prefix
// of each name, so the time grew in the cube of the depth (20,000 deep: over 7 minutes,
// for an archive create wrote in 32 s). Correct behaviour: verify in time in proportion to
// the archive: here a 6,000-deep tree in a 36 MB archive, which took 6 s, given 3 s.
func TestAttackVerifyDeepTreeTime(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch := filepath.Join(dir, "deep.zip")
	writeChainZip(t, arch, 6000)
	cmd := mustRun(t, "verify", arch)
	if took, limit := cpuTime(cmd), timeLimit(3*time.Second); took > limit {
		t.Errorf("verify of a zip of 6001 entries 6000 folders deep took %v of CPU; want under %v", took.Round(time.Millisecond), limit)
	}
}

// writeChainZip writes a zip at path of a tree depth folders deep, an entry for each folder
// (d/, d/d/, …), as create writes, and a file at the bottom.
func writeChainZip(t *testing.T, path string, depth int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zw := zip.NewWriter(f)
	name := ""
	for range depth {
		name += "d/"
		if _, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store}); err != nil {
			t.Fatal(err)
		}
	}
	w, _ := zw.CreateHeader(&zip.FileHeader{Name: name + "f", Method: zip.Store})
	w.Write([]byte("hi"))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestAttackRestoreDeepTreeTime: restore keeps the folders of the path it wrote last
// open, but only the top 64 and the last (restore.md); every entry below them walked
// again, folder by folder, from the 64th down (an open, fstat, inotify watch and fstatat
// each), so restoring a tree N folders deep, an entry for each folder, made N squared
// over two opens: 10 s for 2,000 deep (a 4 MB zip), 100 s and more for the 124 MB archive
// create makes of a tree 8,000 deep in 2.4 s. Correct behaviour: an entry in the folder
// restored last, or below it, goes on from it while no folder can have moved, in time in
// proportion to the archive: given 3 s here.
func TestAttackRestoreDeepTreeTime(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch := filepath.Join(dir, "deep.zip")
	writeChainZip(t, arch, 2000)
	dest := filepath.Join(dir, "dest")
	t.Cleanup(func() { removeDeep(t, dest) })
	cmd := mustRun(t, "restore", "-q", "--jobs", "1", arch, dest)
	if took, limit := cpuTime(cmd), timeLimit(3*time.Second); took > limit {
		t.Errorf("restore of a zip of 2001 entries 2000 folders deep took %v of CPU; want under %v", took.Round(time.Millisecond), limit)
	}
}

// TestAttackRestoreDeepTreeMountChurn: the move guard tripped for good at the first change
// of mounts anywhere on the machine (a container started, an automount, here a tmpfs
// mounted and unmounted in a loop), and from then on every entry's folders were checked
// again from the top: the restore of TestAttackRestoreDeepTreeTime took 48 s of CPU instead
// of 1, as it did in CI while other tests mounted. Correct: a change of mounts (here 20 a
// second, more than a busy container host makes) has each
// chain checked whole once, then the guard goes on: the same bound as without mounts.
func TestAttackRestoreDeepTreeMountChurn(t *testing.T) {
	restoreDeepUnderMountChurn(t, 2000, 3*time.Second)
}

// TestAttackRestoreDeeperTreeMountChurn: as TestAttackRestoreDeepTreeMountChurn, 4,000
// folders deep (1.4 s of CPU without mounts). Each change of mounts had the chain checked
// whole again by dir's slow path: every folder below the top 64 opened again through
// openChild, with its inotify watch set again and its name, up to 8 KB, hashed into the
// record of folders seen: N squared bytes each time. With a mount and unmount every 50 ms
// the restore took 11 s of CPU (98 s at 8,000 deep, 6 s without mounts), and the longer it
// ran the more changes came. Correct: the chain found whole with an open and an fstat a
// folder, once a change, then the guard goes on: within a few times the time without
// mounts (2.4 s).
func TestAttackRestoreDeeperTreeMountChurn(t *testing.T) {
	restoreDeepUnderMountChurn(t, 4000, 6*time.Second)
}

// restoreDeepUnderMountChurn restores a chain of depth folders (writeChainZip) with a
// tmpfs mounted and unmounted every 50 ms meanwhile, in limit of CPU. Not parallel: the
// mounts would make other restores check their folders again, and tests that fail a
// restore's nth system call with strace count on their number.
func restoreDeepUnderMountChurn(t *testing.T, depth int, limit time.Duration) {
	mustRoot(t) // mount
	dir := t.TempDir()
	arch := filepath.Join(dir, "deep.zip")
	writeChainZip(t, arch, depth)
	dest, mnt := filepath.Join(dir, "dest"), filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeDeep(t, dest) })
	stop, churned := make(chan struct{}), make(chan int)
	go func() {
		n := 0
		defer func() { churned <- n }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if syscall.Mount("none", mnt, "tmpfs", 0, "size=64k") != nil {
				return
			}
			syscall.Unmount(mnt, syscall.MNT_DETACH)
			n++
			time.Sleep(50 * time.Millisecond)
		}
	}()
	cmd := mustRun(t, "restore", "-q", "--jobs", "1", arch, dest)
	close(stop)
	if n := <-churned; n < 2 {
		t.Fatalf("the mounts came and went %d times during the restore; want some", n)
	}
	if took, limit := cpuTime(cmd), timeLimit(limit); took > limit {
		t.Errorf("restore of a zip of %d entries %d folders deep, with mounts coming and going, took %v of CPU; want under %v", depth+1, depth, took.Round(time.Millisecond), limit)
	}
}

// mustRun runs the binary to its end, which must be a success, and returns it for its
// resource use.
func mustRun(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(binary, args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%.600s", args[0], err, out)
	}
	return cmd
}

// cpuTime is the CPU time (user and system) the finished cmd took: unlike its wall time,
// what other work on the machine takes does not count, so that a bound with a wide margin
// over what the run needs, and far under what the defect cost, holds under load.
func cpuTime(cmd *exec.Cmd) time.Duration {
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// timeLimit is d, or four times d for the race detector's slower binary.
func timeLimit(d time.Duration) time.Duration {
	if raceEnabled {
		return 4 * d
	}
	return d
}
