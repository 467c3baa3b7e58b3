package main

import (
	"archive/zip"
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

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
	// Only once the stat is made (its result written): under load strace -f writes a call
	// another thread's event cut as "<unfinished ...>" on entering it, and a swap then came
	// before the stat itself (CI saw the walk find the symlink, complete, exit 0).
	waitForCall(t, log, func(call string) bool {
		return strings.Contains(call, "newfstatat(") && (strings.Contains(call, byPath) || strings.Contains(call, relative)) &&
			returned(call)
	})
	swap()
	err := cmd.Wait()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return result{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
}

// Which moment to wait for in an strace -f log (strace 6.1, tried here): on a call's entry
// strace writes "PID call(args" unended; delay_enter holds the call there, before the kernel
// runs it (" <unfinished ...>" ends the line if another thread writes meanwhile); delay_exit
// holds it after, its line whole, "= RESULT (DELAYED)", and the entry may show first. To act
// while a call is held on entry, wait for it !returned; to act once it is made (delay_exit,
// or its result checked), wait for it returned. Never for a bare name: it matches the entry.

// waitForCall waits until a call of the strace -f log at path, whole as straceCalls joins
// it (the last, unended, too), satisfies match: a call cut by another thread's event has its
// result only once its resumed half is written. Matched on !returned, a call held on entry
// that returned before the wait looked is not seen: the wait times out rather than let the
// test act too late.
func waitForCall(t *testing.T, path string, match func(call string) bool) {
	t.Helper()
	for range 3000 {
		if data, err := os.ReadFile(path); err == nil && slices.ContainsFunc(straceCalls(string(data)), match) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	data, _ := os.ReadFile(path)
	t.Fatalf("no matching call in %s:\n%s", path, data)
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

// netRawCap is security.capability for cap_net_raw=ep (VFS_CAP_REVISION_2), as
// `setcap cap_net_raw+ep` writes it.
var netRawCap = []byte{1, 0, 0, 2, 0, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}

// runHeld runs the binary with args (in dir) under strace, which delays the exit of
// every inject syscall (strace's -e inject=...) on the paths traced; when a line of strace's
// log satisfies held (the process is then held in that call), it calls during, and waits for
// the run to end.
func runHeld(t *testing.T, dir, inject string, traced []string, held func(string) bool, during func(), args ...string) result {
	t.Helper()
	return runHeldEach(t, dir, inject, traced, held, []func(){during}, args...)
}

// asNobody runs sh -c script in dir as the user nobody (the unprivileged attacker).
func asNobody(t *testing.T, dir, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("as nobody: %s: %v\n%s", script, err, out)
	}
}

// TestAttackCapabilityKeptForBytesWrittenAfterWalk: app/tool is nobody's own script, to
// which the administrator gave a file capability (cap_net_raw=ep, as `setcap` on a user's
// tool). Any write to the file makes the kernel drop security.capability (file_remove_privs):
// a capability is granted to those bytes only. backup create --xattrs reads the attributes
// in the walk (by path), and the data later, through the file it opens; nobody rewrites his
// file in between:
//   - "between the walk and the open": strace holds the openat of app/tool;
//   - "during the read": strace holds the first read of app/tool. The new change-time check
//     sees the write and reads the file again, but the re-read keeps the attributes the walk
//     read from the file as it was, and says nothing.
//
// Either way the entry holds nobody's new bytes together with the capability the kernel took
// away from them, in a run that says complete with no warning, and `restore --xattrs
// --same-permissions` (as root) makes a cap_net_raw program of nobody's new bytes: a
// privilege nobody never had. The walk even records the change time (ctime_ns) it saw, which
// moved, but nothing compares it to the fstat of the file opened.
//
// Expected: an entry never pairs bytes with attributes the file did not have together with
// them: attributes read again from the opened descriptor (fgetxattr) after reading, or the
// file found changed since the walk listed it (its change time moved: a changed warning) and
// stored without the attributes read from the file as listed, as for a replaced file.
func TestAttackCapabilityKeptForBytesWrittenAfterWalk(t *testing.T) {
	mustRoot(t)
	for _, c := range []struct {
		name    string
		inject  string
		traced  func(app string) []string
		heldAt  string
		options []string
	}{
		{"between the walk and the open", "openat:delay_exit=1500000",
			func(app string) []string { return []string{app} }, `app>, "tool"`, nil},
		{"during the read", "read:delay_exit=1500000:when=1",
			func(app string) []string { return []string{filepath.Join(app, "tool")} }, `read(`, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := sharedTempDir(t)
			app := filepath.Join(dir, "app")
			tool := filepath.Join(app, "tool")
			makeTree(t, dir, map[string]node{"app/tool": {content: "#!/bin/sh\necho good\n", mode: 0o755}})
			if err := os.Chown(tool, nobody, nobody); err != nil {
				t.Fatal(err)
			}
			if err := unix.Setxattr(tool, "security.capability", netRawCap, 0); err != nil {
				t.Skipf("cannot set a file capability here: %v", err)
			}
			r := runHeld(t, dir, c.inject, c.traced(app), func(l string) bool {
				return strings.Contains(l, c.heldAt) && strings.Contains(l, "tool")
			}, func() {
				asNobody(t, app, `printf '#!/bin/sh\necho EVIL\n' > tool`)
				if _, err := unix.Getxattr(tool, "security.capability", make([]byte, 64)); !errors.Is(err, unix.ENODATA) {
					t.Skipf("this kernel kept the capability across a write (%v)", err)
				}
			}, append([]string{"create", "--xattrs", "-o", "b.zip", "app"}, c.options...)...)
			if r.code != exitComplete && r.code != exitIncomplete {
				t.Fatalf("create: exit %d\n%s", r.code, r.stderr)
			}
			archive := filepath.Join(dir, "b.zip")
			data := readZipGo(t, archive)["app/tool"]
			_, meta := storedAs(t, archive, "app/tool")
			if meta == nil {
				t.Fatal("no manifest entry for app/tool")
			}
			if strings.Contains(data, "EVIL") && meta.Xattrs["security.capability"] != nil {
				t.Errorf("app/tool stored with nobody's new bytes %q and the security.capability the kernel dropped when he wrote them (exit %d, %s)",
					data, r.code, strings.TrimSpace(r.stderr))
			}
			// What restore makes of it.
			out := filepath.Join(dir, "out")
			if rr := backup(t, runOpts{dir: dir}, "restore", "--xattrs", "--same-permissions", "b.zip", out); rr.code != exitComplete {
				t.Fatalf("restore: exit %d\n%s", rr.code, rr.stderr)
			}
			restored := filepath.Join(out, "app", "tool")
			got, err := os.ReadFile(restored)
			if err != nil {
				t.Fatal(err)
			}
			if v, err := unix.Getxattr(restored, "security.capability", make([]byte, 64)); err == nil && v > 0 && bytes.Contains(got, []byte("EVIL")) {
				t.Errorf("restore --xattrs --same-permissions made a cap_net_raw program of nobody's bytes %q", got)
			}
		})
	}
}

// TestAttackIgnoreCtimeLosesOwnerChangeDuringRead: --ignore-ctime and --ignore-inode are
// for file systems whose change times (or inodes) move on their own (FUSE without use_ino);
// their owners do not. app/prog is root's script (0755, 2 MiB: a long comment, then `echo
// good`). While backup reads it (strace holds its first read, after the first MiB), the
// administrator hands the file over to nobody (chown), and nobody rewrites its last line
// (same size), puts its mtime back, and makes it setuid (his own file now). The change
// time moved, and the owner too: without the flags the file is read again, found given
// another owner, and stored as nobody's. With either flag nothing compares the owner after
// the open: the entry pairs the walk's owner (root) with the mode of the fstat after reading
// (04755) and bytes nobody wrote, in a run that says complete, and restore
// --same-permissions (as root) makes a root-owned setuid program whose last line is
// nobody's. The docs say the flags leave out the change time and the inode, not that an
// owner change during the read goes unseen.
//
// Expected: with the flags too, an owner (or mode) that differs between the fstat before and
// after reading makes the file read again (it is not one of the numbers those file systems
// move), so that it is stored as nobody's, with a changed warning; never root's owner with
// the setuid bit nobody set.
func TestAttackIgnoreCtimeLosesOwnerChangeDuringRead(t *testing.T) {
	mustRoot(t)
	// "" is the control: without the flags the run holds (read again, stored as nobody's).
	for _, flag := range []string{"", "--ignore-ctime", "--ignore-inode"} {
		t.Run("flag="+flag, func(t *testing.T) {
			args := []string{"create", "-o", "b.zip", "app"}
			if flag != "" {
				args = append(args, flag)
			}
			dir := sharedTempDir(t)
			app := filepath.Join(dir, "app")
			prog := filepath.Join(app, "prog")
			script := "#!/bin/sh\n#" + strings.Repeat("x", 2<<20) + "\necho good\n"
			makeTree(t, dir, map[string]node{"app/prog": {content: script, mode: 0o755}})
			var st syscall.Stat_t
			if err := syscall.Stat(prog, &st); err != nil {
				t.Fatal(err)
			}
			mtime := st.Mtim
			r := runHeld(t, dir, "read:delay_exit=1500000:when=1", []string{prog}, func(l string) bool {
				return strings.Contains(l, "read(") && strings.Contains(l, "prog>")
			}, func() {
				if err := os.Chown(prog, nobody, nobody); err != nil {
					t.Fatal(err)
				}
				asNobody(t, app, "printf 'echo EVIL' | dd of=prog bs=1 seek="+itoa(len(script)-len("echo good\n"))+" conv=notrunc status=none && "+
					"touch -m -d @"+itoa(int(mtime.Sec))+"."+nsec9(mtime.Nsec)+" prog && chmod 04755 prog")
			}, args...)
			if r.code != exitComplete && r.code != exitIncomplete {
				t.Fatalf("create: exit %d\n%s", r.code, r.stderr)
			}
			archive := filepath.Join(dir, "b.zip")
			data := readZipGo(t, archive)["app/prog"]
			mode, meta := storedAs(t, archive, "app/prog")
			if meta == nil {
				t.Fatal("no manifest entry for app/prog")
			}
			if !strings.HasSuffix(data, "echo EVIL\n") {
				t.Skip("the read did not see nobody's line")
			}
			if meta.UID == 0 && mode&os.ModeSetuid != 0 {
				t.Errorf("app/prog stored as root's (uid %d), setuid (%v), with nobody's last line (exit %d, %s)",
					meta.UID, mode, r.code, strings.TrimSpace(r.stderr))
			}
			out := filepath.Join(dir, "out")
			if rr := backup(t, runOpts{dir: dir}, "restore", "--same-permissions", "b.zip", out); rr.code != exitComplete {
				t.Fatalf("restore: exit %d\n%s", rr.code, rr.stderr)
			}
			restored := filepath.Join(out, "app", "prog")
			var rst syscall.Stat_t
			if err := syscall.Stat(restored, &rst); err != nil {
				t.Fatal(err)
			}
			if rst.Uid == 0 && rst.Mode&syscall.S_ISUID != 0 {
				t.Errorf("restore --same-permissions made a root-owned setuid program (mode %o) ending in nobody's line", rst.Mode)
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func nsec9(n int64) string { return fmt.Sprintf("%09d", n) }

// TestAttackACLFromWalkReopensChmoddedSecret: app/notes is nobody's file, shared with user
// 4321 by a POSIX ACL (user:4321:rw-). nobody revokes the share (chmod 0600, which sets the
// ACL's mask to ---: 4321 can no longer read it) and only then writes a secret into it. backup
// create --xattrs read the ACL in the walk, before the chmod:
//   - "between the walk and the open": strace holds the openat of app/notes;
//   - "during the read": strace holds its first read; the chmod moves the change time, which
//     the new check sees, and the file is read again, but the re-read keeps the ACL the walk
//     read.
//
// The entry holds the secret, the mode after the chmod (0600), and the ACL from before it
// (mask rw-). restore --xattrs (no --same-permissions needed: an ACL is no privilege) sets
// the mode, then the ACL, whose mask gives the group bits back: user 4321 reads the secret
// from the restored file, which he could never read on the source. The run said complete,
// with no warning.
//
// Expected: the ACL stored is the one the file had with those bytes (read again from the
// opened descriptor after reading, or the file found changed since the walk with a warning
// and stored without the walk's attributes); the restored file denies user 4321 as the
// source did.
func TestAttackACLFromWalkReopensChmoddedSecret(t *testing.T) {
	mustRoot(t)
	mustTool(t, "setfacl")
	const grantee = 4321
	for _, c := range []struct {
		name   string
		inject string
		traced func(app string) []string
		heldAt string
	}{
		{"between the walk and the open", "openat:delay_exit=1500000",
			func(app string) []string { return []string{app} }, `app>, "notes"`},
		{"during the read", "read:delay_exit=1500000:when=1",
			func(app string) []string { return []string{filepath.Join(app, "notes")} }, `read(`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := sharedTempDir(t)
			app := filepath.Join(dir, "app")
			notes := filepath.Join(app, "notes")
			makeTree(t, dir, map[string]node{"app/notes": {content: "shopping list\n", mode: 0o660}})
			if err := os.Chown(notes, nobody, nobody); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command("setfacl", "-m", "u:"+itoa(grantee)+":rw", notes).CombinedOutput(); err != nil {
				t.Skipf("setfacl: %v\n%s", err, out)
			}
			r := runHeld(t, dir, c.inject, c.traced(app), func(l string) bool {
				return strings.Contains(l, c.heldAt) && strings.Contains(l, "notes")
			}, func() {
				asNobody(t, app, `chmod 0600 notes && printf 'SECRET pin 1234\n' > notes`)
			}, "create", "--xattrs", "-o", "b.zip", "app")
			if r.code != exitComplete && r.code != exitIncomplete {
				t.Fatalf("create: exit %d\n%s", r.code, r.stderr)
			}
			archive := filepath.Join(dir, "b.zip")
			if data := readZipGo(t, archive)["app/notes"]; !strings.Contains(data, "SECRET") {
				t.Skipf("the read did not see the secret: %q", data)
			}
			out := filepath.Join(dir, "out")
			if rr := backup(t, runOpts{dir: dir}, "restore", "--xattrs", "b.zip", out); rr.code != exitComplete {
				t.Fatalf("restore: exit %d\n%s", rr.code, rr.stderr)
			}
			// The grantee cannot read the source, and must not read its restored copy.
			for _, p := range []string{notes, filepath.Join(out, "app", "notes")} {
				cat := exec.Command("cat", p)
				cat.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: grantee, Gid: grantee}}
				got, err := cat.Output()
				switch {
				case p == notes && err == nil:
					t.Fatalf("user %d reads the source %s: the chmod did not revoke the share", grantee, p)
				case p != notes && err == nil:
					t.Errorf("user %d reads the restored %s: %q (run: %s)", grantee, p, got, strings.TrimSpace(r.stderr))
				}
			}
		})
	}
}

// TestAttackIgnoreInodeRenameOverKeepsCapability: app (nobody's folder) holds app/tool,
// nobody's script with a capability the administrator gave it (cap_net_raw=ep). Between the
// walk (which read the attributes, by path) and the open (strace holds the openat of
// app/tool at its entry), nobody renames a new script of his over app/tool, as editors save:
// another inode, the same owner, no capability. Without flags the file is found replaced
// since the walk listed it and stored without the walk's attributes (the control, "", holds).
// With --ignore-inode (for FUSE without use_ino) it is not found replaced (documented), and
// then (not documented) stored with the listed file's security.capability: restore --xattrs
// --same-permissions makes a cap_net_raw program of nobody's new bytes, after a run that
// said complete with no warning. docs/create.md promises a replaced file is stored "without
// the extended attributes read from the listed file"; --ignore-inode is only said to leave
// the inode out of the check.
//
// Expected: with --ignore-inode too, the attributes stored are those of the file opened
// (read from its descriptor), so a file renamed over never carries the capability of the one
// it replaced.
func TestAttackIgnoreInodeRenameOverKeepsCapability(t *testing.T) {
	mustRoot(t)
	for _, flag := range []string{"", "--ignore-inode"} {
		t.Run("flag="+flag, func(t *testing.T) {
			dir := sharedTempDir(t)
			app := filepath.Join(dir, "app")
			tool := filepath.Join(app, "tool")
			makeTree(t, dir, map[string]node{"app/tool": {content: "#!/bin/sh\necho good\n", mode: 0o755}})
			for _, p := range []string{app, tool} {
				if err := os.Chown(p, nobody, nobody); err != nil {
					t.Fatal(err)
				}
			}
			if err := unix.Setxattr(tool, "security.capability", netRawCap, 0); err != nil {
				t.Skipf("cannot set a file capability here: %v", err)
			}
			args := []string{"create", "--xattrs", "-o", "b.zip", "app"}
			if flag != "" {
				args = append(args, flag)
			}
			r := runHeld(t, dir, "openat:delay_enter=1500000", []string{app}, func(l string) bool {
				return strings.Contains(l, `app>, "tool"`)
			}, func() {
				asNobody(t, app, `printf '#!/bin/sh\necho EVIL\n' > new && chmod 0755 new && mv new tool`)
			}, args...)
			if r.code != exitComplete && r.code != exitIncomplete {
				t.Fatalf("create: exit %d\n%s", r.code, r.stderr)
			}
			archive := filepath.Join(dir, "b.zip")
			data := readZipGo(t, archive)["app/tool"]
			_, meta := storedAs(t, archive, "app/tool")
			if meta == nil || !strings.Contains(data, "EVIL") {
				t.Skipf("the open did not find the new file: %q", data)
			}
			if meta.Xattrs["security.capability"] != nil {
				t.Errorf("app/tool stored with nobody's new bytes %q and the capability of the file it replaced (exit %d, %s)",
					data, r.code, strings.TrimSpace(r.stderr))
			}
		})
	}
}

// runHeldEach is runHeld for a syscall held each time: during[i] runs while the
// (i+1)th line of strace's log that satisfies held is held.
func runHeldEach(t *testing.T, dir, inject string, traced []string, held func(string) bool, during []func(), args ...string) result {
	t.Helper()
	mustTool(t, "strace")
	log := filepath.Join(t.TempDir(), "strace.log")
	sargs := []string{"-f", "-y", "-o", log, "-e", "inject=" + inject}
	for _, p := range traced {
		sargs = append(sargs, "-P", p)
	}
	cmd := exec.Command("strace", append(append(sargs, binary), args...)...)
	cmd.Dir = dir
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for i, f := range during {
		waitForCount(t, log, heldAt(inject, held), i+1)
		f()
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return result{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
}

// heldAt is held for the calls inject holds: a call held on exit only once the kernel ran
// it (strace writes its entry before, and a change then comes before the call). A call
// held on entry is counted from its entry on.
func heldAt(inject string, held func(string) bool) func(string) bool {
	if !strings.Contains(inject, "delay_exit") || strings.Contains(inject, "delay_enter") {
		return held
	}
	return func(call string) bool { return held(call) && returned(call) }
}

// waitForCount waits until n calls strace logged in the file at path satisfy match.
func waitForCount(t *testing.T, path string, match func(string) bool, n int) {
	t.Helper()
	for range 3000 {
		data, _ := os.ReadFile(path)
		got := 0
		for _, l := range straceCalls(string(data)) {
			if match(l) {
				got++
			}
		}
		if got >= n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	data, _ := os.ReadFile(path)
	t.Fatalf("fewer than %d matching lines in %s:\n%s", n, path, data)
}

// returned reports whether a call of straceCalls has its result, written only once the
// kernel ran it (strace pads a short call to column 40: `read(3, "hi", 8)      = 2`).
func returned(call string) bool {
	return resultRE.MatchString(call)
}

var resultRE = regexp.MustCompile(`\) +=`)

// straceCalls is the calls of a log strace -f wrote, one a line: a call that another
// thread's call cut ("12 pread64(7</a/db>,  <unfinished ...>", later "12 <... pread64
// resumed>"..., 4096, 16384) = 4096"), as strace writes under load, is joined again, so
// that a match on both halves of a call sees them.
func straceCalls(log string) []string {
	var calls []string
	open := map[string]int{} // the pid of a call cut short, and its line in calls
	for _, l := range strings.Split(log, "\n") {
		// strace pads a pid to 5 columns: "3804  call(", "12345 call(".
		pid, rest, _ := strings.Cut(l, " ")
		rest = strings.TrimLeft(rest, " ")
		if head, ok := strings.CutSuffix(rest, " <unfinished ...>"); ok {
			open[pid] = len(calls)
			calls = append(calls, pid+" "+head)
			continue
		}
		if i, ok := open[pid]; ok && strings.HasPrefix(rest, "<... ") {
			if _, tail, found := strings.Cut(rest, " resumed>"); found {
				calls[i] += tail
				delete(open, pid)
				continue
			}
		}
		calls = append(calls, l)
	}
	return calls
}

// TestAttackLastChangedCopyMixesGroupAndSetgid: the default run, no flag. app/prog is
// nobody's file in group 4242, a group nobody is not in (as an administrator sets a user's
// web files to the web server's group). A file that keeps changing is read 3 times and the
// last copy kept with a changed warning; that copy's mode comes from the fstat after
// reading (see archive/header.go, st.info = after) but its owner and group from the walk
// (or the fstat before reading). nobody, who may write his own file, change its group to
// his own and make it setgid, watches the reads (strace holds each one here; inotify's
// IN_OPEN/IN_ACCESS would tell him): during the first read he writes to it, during the
// second he writes his program, during the third he gives it his own group and the setgid
// bit (chmod g+s is only allowed in a group he is in). The change time moved each time, so
// each read is found changed, as the change promises; but the kept copy holds his program,
// with group 4242 and mode 02755 together, which the file never had: the run exits 0
// (changed is not lost) and restore --same-permissions (as root) makes a program setgid to
// group 4242 of nobody's bytes, a group he was never in.
//
// Expected: the copy kept after the last read is stored with the owner and group of the
// same fstat its mode comes from (the one after reading), or without the setuid/setgid
// bits when they differ; never group 4242 with a setgid bit set under another group.
func TestAttackLastChangedCopyMixesGroupAndSetgid(t *testing.T) {
	mustRoot(t)
	const group = 4242
	dir := sharedTempDir(t)
	app := filepath.Join(dir, "app")
	prog := filepath.Join(app, "prog")
	makeTree(t, dir, map[string]node{"app/prog": {content: "#!/bin/sh\necho good\n", mode: 0o755}})
	if err := os.Chown(prog, nobody, group); err != nil {
		t.Fatal(err)
	}
	r := runHeldEach(t, dir, "read:delay_exit=1500000", []string{prog}, func(l string) bool {
		return strings.Contains(l, "read(") && strings.Contains(l, "prog>")
	}, []func(){
		func() { asNobody(t, app, `printf '#!/bin/sh\necho good \n' > prog`) },
		func() { asNobody(t, app, `printf '#!/bin/sh\necho EVIL!\n' > prog`) },
		func() { asNobody(t, app, `chgrp 65534 prog && chmod 02755 prog`) },
	}, "create", "-o", "b.zip", "app")
	if r.code != exitComplete && r.code != exitIncomplete {
		t.Fatalf("create: exit %d\n%s", r.code, r.stderr)
	}
	archive := filepath.Join(dir, "b.zip")
	data := readZipGo(t, archive)["app/prog"]
	mode, meta := storedAs(t, archive, "app/prog")
	if meta == nil || !strings.Contains(data, "EVIL") {
		t.Skipf("the reads did not go as held: %q (%s)", data, r.stderr)
	}
	if meta.GID == group && mode&os.ModeSetgid != 0 {
		t.Errorf("app/prog stored in group %d with mode %v (setgid) and nobody's bytes %q, which the file never had together (exit %d: %s)",
			meta.GID, mode, data, r.code, strings.TrimSpace(r.stderr))
	}
	out := filepath.Join(dir, "out")
	if rr := backup(t, runOpts{dir: dir}, "restore", "--same-permissions", "b.zip", out); rr.code != exitComplete {
		t.Fatalf("restore: exit %d\n%s", rr.code, rr.stderr)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(out, "app", "prog"), &st); err != nil {
		t.Fatal(err)
	}
	if st.Gid == group && st.Mode&syscall.S_ISGID != 0 {
		t.Errorf("restore --same-permissions made nobody's program setgid to group %d (mode %o)", group, st.Mode)
	}
}

// TestAttackCtimeOnlyChangeWarningSaysNothingChanged: app/f's bytes, size, mtime, mode
// and owner never change; while each of its 3 reads is held, another process only adds a
// hard link to it outside the source (as rsnapshot's or `cp -al`'s snapshots do), which
// moves its change time. The run keeps it with a changed warning (a CI wrapper sees a run
// that is not clean) whose text is "changed while being read (size 6, then 6 bytes; 6
// read)": it names nothing that changed, and docs/create.md says a moved change time "means
// a write or a change of owner or mode", which a new link is neither (nor a new xattr, a
// touch -a, a rename). GNU tar warns here too, so the warning itself may stay; what it says
// is false.
//
// Expected: a warning for a file whose size and mtime held but whose change time moved
// says so (e.g. "its change time moved"), not sizes that are equal, and the docs list the
// other causes (links, attributes, atime set).
func TestAttackCtimeOnlyChangeWarningSaysNothingChanged(t *testing.T) {
	dir := t.TempDir()
	app := filepath.Join(dir, "app")
	makeTree(t, dir, map[string]node{"app/f": {content: "hello\n"}})
	f := filepath.Join(app, "f")
	var links []func()
	for i := range 3 {
		links = append(links, func() {
			if err := os.Link(f, filepath.Join(dir, "link"+itoa(i))); err != nil {
				t.Fatal(err)
			}
		})
	}
	r := runHeldEach(t, dir, "read:delay_exit=800000", []string{f}, func(l string) bool {
		return strings.Contains(l, "read(") && strings.Contains(l, "/f>")
	}, links, "create", "-o", "b.zip", "app")
	if r.code != exitComplete {
		t.Fatalf("create: exit %d\n%s", r.code, r.stderr)
	}
	if got := readZipGo(t, filepath.Join(dir, "b.zip"))["app/f"]; got != "hello\n" {
		t.Fatalf("app/f = %q", got)
	}
	rc := readReceipt(t, filepath.Join(dir, "b.zip.receipt.json"))
	for _, w := range rc.Warnings {
		if w.Path == "app/f" && w.Op == "changed" && !strings.Contains(w.Error, "change time") {
			t.Errorf("warning %q for a file whose only change was a new hard link: it names no change", w.Error)
		}
	}
}
