package main

import (
	"archive/zip"
	"bufio"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"backup/format"
)

// TestCreateDirSwappedForSymlink is the attack of issue 8: while the walk is between the stat
// of a path and its open, app/dir is moved away and replaced by a symlink to a folder outside
// the source holding a secret x. strace holds the process in that stat (by its full path, or
// relative to the folder's descriptor) long enough for the swap. The secret must never reach
// the archive. Swapped after the stat of app/dir/x, the walk reads the original x through the
// folder it opened, and the run is complete; swapped after the stat of app/dir itself, the
// folder is not read, and is lost.
func TestCreateDirSwappedForSymlink(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	cases := []struct {
		name         string
		folder, stat string // the stat held: of stat in folder
		code         int
		files        map[string]string
		warnings     []string
	}{
		{"after the stat of a file in it", "app/dir", "x", exitComplete,
			map[string]string{"app/dir/x": "in\n", "app/keep.txt": "kept\n"}, nil},
		{"after its own stat", "app", "dir", exitIncomplete,
			map[string]string{"app/keep.txt": "kept\n"}, []string{"app/dir open lost=true"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			makeTree(t, dir, map[string]node{
				"app/dir/x":     {content: "in\n"},
				"app/keep.txt":  {content: "kept\n"},
				"outside/x":     {content: "SECRET\n"},
				"outside/other": {content: "SECRET too\n"},
			})
			sub := filepath.Join(dir, "app", "dir")
			r := createSwapping(t, dir, c.folder, c.stat, func() {
				if err := os.Rename(sub, filepath.Join(dir, "dir.orig")); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(filepath.Join(dir, "outside"), sub); err != nil {
					t.Fatal(err)
				}
			})
			if r.code != c.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", r.code, c.code, r.stderr)
			}
			entries := readZip(t, filepath.Join(dir, "b.zip"))
			for name, content := range entries {
				if strings.Contains(content, "SECRET") {
					t.Errorf("%s holds %q, read from outside the source", name, content)
				}
			}
			for name, want := range c.files {
				if got := entries[name]; got != want {
					t.Errorf("%s = %q, want the original %q", name, got, want)
				}
			}
			rc := readReceipt(t, filepath.Join(dir, "b.zip.receipt.json"))
			var warnings []string
			for _, w := range rc.Warnings {
				warnings = append(warnings, fmt.Sprintf("%s %s lost=%v", w.Path, w.Op, w.Lost))
			}
			if !slices.Equal(warnings, c.warnings) || rc.Counts.Files != len(c.files) {
				t.Errorf("receipt: warnings %q, %d files; want %q, %d files", warnings, rc.Counts.Files, c.warnings, len(c.files))
			}
		})
	}
}

// createSwapping runs backup create -o dir/b.zip dir/app under strace, which holds every
// stat of folder/name, and every stat in folder (both below dir); when the stat of name is
// held, it calls swap.
func createSwapping(t *testing.T, dir, folder, name string, swap func()) result {
	t.Helper()
	log := filepath.Join(dir, "strace.log")
	traced := filepath.Join(dir, folder)
	cmd := exec.Command("strace", "-f", "-y", "-o", log, "-e", "inject=newfstatat:delay_exit=1500000",
		"-P", traced, "-P", filepath.Join(traced, name),
		binary, "create", "-o", filepath.Join(dir, "b.zip"), filepath.Join(dir, "app"))
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The stat by its full path (a walk by paths), or relative to the folder's descriptor.
	byPath := "/" + folder + "/" + name + `"`
	relative := "/" + folder + `>, "` + name + `"`
	waitForLine(t, log, func(l string) bool {
		return strings.Contains(l, "newfstatat(") && (strings.Contains(l, byPath) || strings.Contains(l, relative))
	})
	swap()
	err := cmd.Wait()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return result{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
}

// waitForLine waits until a line of the file at path satisfies match. It is how the test
// learns that the traced process is held in the syscall strace delays: strace writes the
// line before the delay.
func waitForLine(t *testing.T, path string, match func(string) bool) {
	t.Helper()
	for range 3000 {
		if f, err := os.Open(path); err == nil {
			s := bufio.NewScanner(f)
			for s.Scan() {
				if match(s.Text()) {
					f.Close()
					return
				}
			}
			f.Close()
		}
		time.Sleep(10 * time.Millisecond)
	}
	data, _ := os.ReadFile(path)
	t.Fatalf("no matching line in %s:\n%s", path, data)
}

// TestAttackFileSwappedAfterStatKeepsOldOwner: the walk lstats app/a (root's file, 0644, in
// a folder that nobody owns), and a worker opens app/a later by name, without checking that
// what it opened is the file the walk stat'ed. Between the two, nobody renames his own file
// (mode 04755, a shell script) over app/a, as the owner of the folder may. The entry then
// holds nobody's bytes and, from the fstat after reading, nobody's setuid mode, but the owner
// the walk saw: uid 0. The run says complete, and restore --same-permissions (docs/restore.md:
// setuid bits come back "only together with the owner they belong to") makes a root-owned
// setuid program of nobody's script. An entry must never pair one file's bytes and mode with
// another file's owner: the file found at the name is stored with its own owner, and a
// changed warning (not lost) says it was replaced since the walk listed it.
func TestAttackFileSwappedAfterStatKeepsOldOwner(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "strace")
	dir := sharedTempDir(t)
	app, stage := filepath.Join(dir, "app"), filepath.Join(dir, "stage")
	makeTree(t, dir, map[string]node{"app/a": {content: "root's data\n"}, "stage/evil": {content: "#!/bin/sh\nid\n"}})
	for _, p := range []string{app, stage, filepath.Join(stage, "evil")} {
		if err := os.Chown(p, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(stage, "evil"), os.ModeSetuid|0o755); err != nil {
		t.Fatal(err)
	}
	r := createSwapping(t, dir, "app", "a", func() {
		// nobody, who owns app, replaces root's file in it.
		mv := exec.Command("mv", filepath.Join(stage, "evil"), filepath.Join(app, "a"))
		mv.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
		if out, err := mv.CombinedOutput(); err != nil {
			t.Fatalf("mv as nobody: %v\n%s", err, out)
		}
	})
	archive := filepath.Join(dir, "b.zip")
	if r.code != exitComplete && r.code != exitIncomplete {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	got, stored := readZip(t, archive)["app/a"]
	switch {
	case !stored:
		t.Fatalf("exit %d: app/a, a file at its name all along, is not in the archive\n%s", r.code, r.stdout+r.stderr)
	case got != "#!/bin/sh\nid\n":
		t.Skipf("the swap came too late or too early: app/a holds %q", got)
	}
	said := false
	for _, w := range readReceipt(t, archive+".receipt.json").Warnings {
		said = said || w.Path == "app/a" && w.Op == "changed" && strings.Contains(w.Error, "replaced by another file, or given another owner, since the walk listed it")
	}
	if !said || r.code != exitComplete {
		t.Errorf("exit %d, no changed warning for app/a, replaced since the walk listed it\n%s", r.code, r.stdout+r.stderr)
	}
	if mode, meta := storedAs(t, archive, "app/a"); meta != nil && meta.UID != nobody {
		t.Errorf("exit %d: app/a holds nobody's script with mode %v, recorded as owned by uid %d (%s); restore --same-permissions makes it a setuid program of that user",
			r.code, mode, meta.UID, meta.User)
	}
}

// TestAttackFileSavedByRenameDroppedFromCompleteRun: an editor saves app/a the usual way,
// writing a new file and renaming it over the old one, between the walk's lstat of app/a and
// the worker's open. The name app/a never stops leading to a file: before, during and after
// the run the user has app/a. The worker sees another inode than the walk listed and leaves
// the file out as "vanished" (lost: false): the run says complete, exit 0, and the archive
// holds no app/a at all, neither the old bytes nor the new. A file rewritten in place in the
// same window is stored (changed: read again, the last copy kept); saved by rename it is
// dropped from a complete backup. README: anything it could not read makes the backup
// incomplete; here it was not even tried. The file must be stored (its own owner and mode,
// from what was opened), or the run say it lost it.
func TestAttackFileSavedByRenameDroppedFromCompleteRun(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"app/a": {content: "version 1\n"}, "app/b": {content: "b\n"}})
	r := createSwapping(t, dir, "app", "a", func() {
		tmp := filepath.Join(dir, "app", ".a.swp")
		if err := os.WriteFile(tmp, []byte("version 2\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, "app", "a")); err != nil {
			t.Fatal(err)
		}
	})
	archive := filepath.Join(dir, "b.zip")
	got, stored := readZip(t, archive)["app/a"]
	if stored {
		if got != "version 1\n" && got != "version 2\n" {
			t.Errorf("app/a holds %q", got)
		}
		return
	}
	if r.code == exitIncomplete {
		return // said lost
	}
	rc := readReceipt(t, archive+".receipt.json")
	var warnings []string
	for _, w := range rc.Warnings {
		warnings = append(warnings, w.Path+" "+w.Op+": "+w.Error)
	}
	t.Errorf("exit %d, status %s: app/a, which existed throughout the run, is not in the archive; warnings: %s",
		r.code, rc.Status, strings.Join(warnings, "; "))
}

// TestAttackInodeReusedAfterStatKeepsOldOwner: attack7's swap (root's app/a replaced, between
// the walk's lstat and the worker's open, by nobody, who owns the folder app) done as delete
// and create rather than rename: nobody removes root's file and writes his own setuid script
// at the name. ext4 gives a new file the lowest free inode of its group, which is the one just
// freed: the newcomer has the listed file's device and inode, so the worker's check (same
// dev/ino as the walk listed) passes, and the entry pairs nobody's bytes and setuid mode with
// the owner the walk saw, uid 0, exit 0 complete. restore --same-permissions then makes a
// root-owned setuid program of nobody's script (docs/restore.md: setuid bits come back only
// together with the owner they belong to; docs/create.md: the newcomer "is not stored under"
// the listed file's owner).
func TestAttackInodeReusedAfterStatKeepsOldOwner(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "strace")
	reused := 0
	for attempt := range 6 {
		dir := sharedTempDir(t)
		app, stage := filepath.Join(dir, "app"), filepath.Join(dir, "stage")
		makeTree(t, dir, map[string]node{"app/a": {content: "root's data\n"}, "stage/evil": {content: "#!/bin/sh\nid\n"}})
		for _, p := range []string{app, stage, filepath.Join(stage, "evil")} {
			if err := os.Chown(p, nobody, nobody); err != nil {
				t.Fatal(err)
			}
		}
		before, err := os.Lstat(filepath.Join(app, "a"))
		if err != nil {
			t.Fatal(err)
		}
		r := createSwapping(t, dir, "app", "a", func() {
			// nobody, who owns app, deletes root's file and writes his own at its name.
			sh := exec.Command("sh", "-c", `rm -f "$1/a" && cat "$2/evil" > "$1/a" && chmod 4755 "$1/a"`, "sh", app, stage)
			sh.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
			if out, err := sh.CombinedOutput(); err != nil {
				t.Fatalf("as nobody: %v\n%s", err, out)
			}
		})
		after, err := os.Lstat(filepath.Join(app, "a"))
		if err != nil {
			t.Fatal(err)
		}
		if !os.SameFile(before, after) {
			continue // another inode: the check sees it
		}
		reused++
		archive := filepath.Join(dir, "b.zip")
		if r.code != exitComplete && r.code != exitIncomplete {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
		if got := readZip(t, archive)["app/a"]; got != "#!/bin/sh\nid\n" {
			continue
		}
		if mode, meta := storedAs(t, archive, "app/a"); meta != nil && meta.UID != nobody {
			t.Fatalf("attempt %d, exit %d: app/a holds nobody's script, mode %v (inode %d reused), recorded as owned by uid %d (%s)",
				attempt, r.code, mode, after.Sys().(*syscall.Stat_t).Ino, meta.UID, meta.User)
		}
		return // one swap onto the freed inode, stored with its own owner
	}
	if reused == 0 {
		t.Skip("the file system never gave the new file the freed inode")
	}
}

// TestAttackRemetaKeepsWalksLinkGroup: app/a and app/b are hard links of root's program
// (0755). Between the walk's lstat of app/a (nlink 2) and the worker's open, nobody, who owns
// the folder app, moves root's app/a out of the tree (its inode keeps 2 names: app/b and the
// moved one, so the walk's lstat of app/b still says nlink 2) and puts his own copy of the same
// bytes at app/a. The worker sees another inode and, since 1b3c1c6, stores app/a with metadata
// made again from its fstat: owner nobody, nobody's inode. But the entry keeps the hard-link
// group the walk gave it from the listed file's device and inode (archive.Writer.linkGroup on
// the walk's lstat): the manifest records app/a (nobody's inode) and app/b (root's inode) as
// one link group. docs/create.md: "files of one run with the same device and inode are one
// link group". backup restore, as root, links the members of a group whose records give the
// same content to the group's first file: one of app/a and app/b then belongs to the other's
// owner, against the owner its record gives. Here app/b, root's program, comes back owned by
// nobody, who can then rewrite what root runs.
func TestAttackRemetaKeepsWalksLinkGroup(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "strace")
	dir := sharedTempDir(t)
	app, stage := filepath.Join(dir, "app"), filepath.Join(dir, "stage")
	const program = "#!/bin/sh\necho root's program\n"
	makeTree(t, dir, map[string]node{"app/a": {content: program}, "stage/n": {content: program}})
	if err := os.Chmod(filepath.Join(app, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(app, "a"), filepath.Join(app, "b")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{app, stage, filepath.Join(stage, "n")} {
		if err := os.Chown(p, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	r := createSwapping(t, dir, "app", "a", func() {
		sh := exec.Command("sh", "-c", `mv "$1/a" "$2/a.old" && mv "$2/n" "$1/a"`, "sh", app, stage)
		sh.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
		if out, err := sh.CombinedOutput(); err != nil {
			t.Fatalf("as nobody: %v\n%s", err, out)
		}
	})
	archive := filepath.Join(dir, "b.zip")
	if r.code != exitComplete && r.code != exitIncomplete {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	uid := map[string]uint32{}
	link := map[string]int{}
	for _, f := range readManifest(t, archive).Files {
		if f.Meta != nil {
			uid[f.Path], link[f.Path] = f.Meta.UID, f.Link
		}
	}
	if uid["app/a"] != nobody {
		t.Skipf("the swap came too late: app/a recorded as uid %d", uid["app/a"])
	}
	if link["app/a"] != 0 && link["app/a"] == link["app/b"] {
		t.Errorf("manifest: app/a (uid %d, nobody's own inode) and app/b (uid %d) are one link group (%d)",
			uid["app/a"], uid["app/b"], link["app/a"])
	}
	dest := filepath.Join(dir, "dest")
	rr := backup(t, runOpts{}, "restore", "--jobs", "1", archive, dest)
	if rr.code != 0 {
		t.Fatalf("restore: exit %d\n%s", rr.code, rr.stdout+rr.stderr)
	}
	for _, name := range []string{"app/a", "app/b"} {
		info, err := os.Lstat(filepath.Join(dest, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Sys().(*syscall.Stat_t).Uid; got != uid[name] {
			t.Errorf("restored %s belongs to uid %d; its record says uid %d", name, got, uid[name])
		}
	}
}

// fdOpenOn waits until the process pid holds a descriptor open on path (as /proc shows its
// target) whose file is the one info describes, and reports whether it saw one in time.
func fdOpenOn(pid int, path string, info os.FileInfo, timeout time.Duration) bool {
	fds := fmt.Sprintf("/proc/%d/fd", pid)
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); {
		entries, _ := os.ReadDir(fds)
		for _, e := range entries {
			p := filepath.Join(fds, e.Name())
			if target, err := os.Readlink(p); err == nil && target == path {
				if st, err := os.Stat(p); err == nil && os.SameFile(st, info) {
					return true
				}
			}
		}
		time.Sleep(200 * time.Microsecond)
	}
	return false
}

// TestAttackRetryKeepsOtherFilesOwner: a file that changes while it is read is read again, up
// to 3 times (docs/create.md, changed), each time opened anew by name. remeta (1b3c1c6) makes
// the entry's metadata again from the file opened when it is not the one the walk listed, but
// it overwrites the only copy of the walk's metadata, and a later read that opens the listed
// file again keeps what the earlier read put there. Here app/a is nobody's setuid program
// (04755, his own), large. While it is read the first time it grows (changed); before the
// second read, root's growing file (a log, 0644) is found at app/a (moved there, as the owner of
// the folder may, and back), so the second read remakes the metadata from it: uid 0; it grows
// too (changed); before the third read nobody's file is back at app/a. The third read opens the
// listed file (same device, inode and owner as the walk's lstat), so nothing is remade: the
// entry holds nobody's bytes and nobody's setuid mode under uid 0. restore --same-permissions
// makes it a root setuid program; docs/create.md: never "under the listed file's owner" /
// another file's owner.
func TestAttackRetryKeepsOtherFilesOwner(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	for attempt := range 5 {
		dir := t.TempDir()
		app, stage := filepath.Join(dir, "app"), filepath.Join(dir, "stage")
		for _, d := range []string{app, stage} {
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		big := func(path string, seed byte) {
			data := make([]byte, 48<<20)
			for i := range data {
				data[i] = byte(i*7) ^ seed ^ byte(i>>13)
			}
			if _, err := rand.Read(data[:len(data)/2]); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		listed, other := filepath.Join(app, "a"), filepath.Join(stage, "log")
		big(listed, 1)
		big(other, 2)
		if err := os.Chown(listed, nobody, nobody); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(listed, os.ModeSetuid|0o755); err != nil {
			t.Fatal(err)
		}
		grow := func(path string) {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.Write([]byte("more\n"))
			f.Close()
		}
		lInfo, _ := os.Stat(listed)
		xInfo, _ := os.Stat(other)
		archive := filepath.Join(dir, "b.zip")
		cmd := exec.Command(binary, "create", "--jobs", "1", "-o", archive, app)
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ok := fdOpenOn(cmd.Process.Pid, listed, lInfo, 20*time.Second)
		if ok { // first read: nobody's file, growing; then root's log takes its name
			grow(listed)
			os.Rename(listed, filepath.Join(stage, "a"))
			os.Rename(other, listed)
			ok = fdOpenOn(cmd.Process.Pid, listed, xInfo, 20*time.Second)
		}
		if ok { // second read: root's log, growing; then nobody's file is back
			grow(listed)
			os.Rename(filepath.Join(stage, "a"), listed)
		}
		cmd.Wait()
		if !ok {
			continue
		}
		want, err := os.ReadFile(listed)
		if err != nil {
			t.Fatal(err)
		}
		if readZip(t, archive)["app/a"] != string(want) {
			continue // the swaps came too late for a read
		}
		if mode, meta := storedAs(t, archive, "app/a"); meta != nil && meta.UID != nobody {
			t.Fatalf("attempt %d: app/a holds nobody's bytes and mode %v, recorded as owned by uid %d (%s)\n%s",
				attempt, mode, meta.UID, meta.User, out.String())
		}
		return
	}
	t.Skip("the swaps never landed between the reads")
}

// storedAs is the mode the zip gives the entry name of the archive at path, and the
// metadata its manifest records for it (nil when none).
func storedAs(t *testing.T, archive, name string) (fs.FileMode, *format.Meta) {
	t.Helper()
	zr, err := zip.OpenReader(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var mode fs.FileMode
	for _, f := range zr.File {
		if f.Name == name {
			mode = f.Mode()
		}
	}
	for _, f := range readManifest(t, archive).Files {
		if f.Path == name {
			return mode, f.Meta
		}
	}
	return mode, nil
}
