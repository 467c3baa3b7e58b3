package main

import (
	"archive/zip"
	"crypto/rand"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAttack9RemetaKeepsWalksLinkGroup: app/a and app/b are hard links of root's program
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
func TestAttack9RemetaKeepsWalksLinkGroup(t *testing.T) {
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

// TestAttack9RetryKeepsOtherFilesOwner: a file that changes while it is read is read again, up
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
func TestAttack9RetryKeepsOtherFilesOwner(t *testing.T) {
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
		zr, err := zip.OpenReader(archive)
		if err != nil {
			t.Fatal(err)
		}
		var mode fs.FileMode
		for _, f := range zr.File {
			if f.Name == "app/a" {
				mode = f.Mode()
			}
		}
		zr.Close()
		for _, f := range readManifest(t, archive).Files {
			if f.Path == "app/a" && f.Meta != nil && f.Meta.UID != nobody {
				t.Fatalf("attempt %d: app/a holds nobody's bytes and mode %v, recorded as owned by uid %d (%s)\n%s",
					attempt, mode, f.Meta.UID, f.Meta.User, out.String())
			}
		}
		return
	}
	t.Skip("the swaps never landed between the reads")
}

// TestAttack9KilledRunsStagedCopyArchivedByOtherRuns: 2576ea3 leaves a killed run's staged
// copy (.backup-spool-sqlite-N in the output folder, here inside the SOURCE, as docs/create.md
// allows) out of the next runs by its whole name, but only while the walk meets it in this
// run's staging folder, which is known only with --sqlite auto and is $TMPDIR for a streamed
// (-o -) or encrypted run. So the same leftover is archived by the next run that says
// --sqlite off, or streams its archive: the dead run's partial copy of the database goes into
// the backup as a file of the user's (restored next to the database as
// home/out/.backup-spool-sqlite-N), and the run is complete. Commit 2576ea3: "a copy a killed
// run left is never archived by the next runs"; docs/sets.md: a killed run's temp file "never
// disturbs a later run".
func TestAttack9KilledRunsStagedCopyArchivedByOtherRuns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	makeTree(t, home, map[string]node{"a.txt": {content: "a\n"}, "out/keep": {content: "k\n"}})
	db := openSQLite(t, filepath.Join(home, "locked.db"), "delete")
	addRows(t, db, 10, 100)
	conn, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(t.Context(), "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(home, "out")
	cmd := exec.Command(binary, "create", "--sqlite-timeout", "60s", "-o", filepath.Join(out, "a.zip"), home)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); len(spoolsIn(t, out)) == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the run never staged the snapshot")
		}
	}
	cmd.Process.Kill() // SIGKILL: nothing is cleaned up
	cmd.Wait()
	if _, err := conn.ExecContext(t.Context(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	left := spoolsIn(t, out)
	check := func(how, archive string, r result) {
		if r.code != exitComplete {
			t.Errorf("%s: exit %d\n%s", how, r.code, r.stdout+r.stderr)
		}
		for name := range readZip(t, archive) {
			if strings.Contains(name, ".backup-spool-") {
				t.Errorf("%s: the run archived the killed run's staged copy %s (left: %q)", how, name, left)
			}
		}
	}
	archive := filepath.Join(out, "b.zip")
	check("--sqlite off", archive, backup(t, runOpts{}, "create", "--sqlite", "off", "-o", archive, home))
	streamed := filepath.Join(dir, "c.zip")
	r := backup(t, runOpts{}, "create", "-o", "-", "--receipt", filepath.Join(dir, "c.receipt.json"), home)
	if err := os.WriteFile(streamed, []byte(r.stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	r.stdout = ""
	check("-o -", streamed, r)
}

// TestAttack9AdoptReadsHugeFilePlantedAtItsName: cd38030 makes adopt check the size of the
// set's copy before it hashes it, so that "a huge sparse file planted at the name is not read
// under the set's lock". copyInto, which links the copy into place, still calls sameContent
// with no size (-1) when the link finds a file at the name: a file planted there while adopt
// copies (strace holds its linkat so the test can plant it; a large archive's copy gives the
// same window) is read end to end under the set's lock. Here a 1 TiB sparse file: adopt is
// still hashing it, holding the lock, long after the copy of a 1 KiB archive was done.
func TestAttack9AdoptReadsHugeFilePlantedAtItsName(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"app/f": {content: "hi\n"}})
	archive := filepath.Join(dir, "a.zip")
	if r := backup(t, runOpts{}, "create", "-o", archive, filepath.Join(dir, "app")); r.code != exitComplete {
		t.Fatalf("create: exit %d\n%s", r.code, r.stderr)
	}
	set := filepath.Join(dir, "set")
	cmd := exec.Command("strace", "-f", "-qq", "-o", os.DevNull, "-e", "trace=linkat",
		"-e", "inject=linkat:delay_enter=2000000", binary, "adopt", set, archive)
	outFile := filepath.Join(dir, "adopt.out")
	of, err := os.Create(outFile)
	if err != nil {
		t.Fatal(err)
	}
	defer of.Close()
	cmd.Stdout, cmd.Stderr = of, of
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	defer func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); <-done }()
	var receipt []string
	for deadline := time.Now().Add(20 * time.Second); len(receipt) == 0; time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("adopt wrote no receipt")
		}
		receipt, _ = filepath.Glob(filepath.Join(set, "*.zip.receipt.json"))
	}
	name := strings.TrimSuffix(receipt[0], ".receipt.json")
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		t.Skipf("too late to plant: %v", err)
	}
	if err := f.Truncate(1 << 40); err != nil {
		t.Fatal(err)
	}
	f.Close()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		data, _ := os.ReadFile(outFile)
		t.Errorf("adopt still runs 30 s after a 1 TiB sparse file was planted at %s: reading it whole under the set's lock\n%s",
			filepath.Base(name), data)
	}
}
