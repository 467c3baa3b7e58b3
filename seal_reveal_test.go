package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// The heart of encryption: nothing that leaves the machine reveals a file name or a byte of
// content. These tests back up a tree whose every name and whose content carry markers into
// an encrypted set (in a bucket, and in a folder), with runs that reuse, fail and call hooks,
// then read every byte the set holds (objects and their names and metadata, receipts,
// LATEST, the lock, as a copy taken while it was held) for the markers. A plain set made the
// same way is read too: there the markers must be found, or the search proves nothing.

// revealTree is the tree the reveal tests back up: every name carries the marker zq7x9kw, and
// one file's content the marker string revealContent. Markers are long enough never to turn
// up by chance in megabytes of ciphertext (a 3-byte one did, in one run of four).
const revealContent = "zq7x9kw-CONTENT-the-password-is-swordfish"

func revealTree(t *testing.T, dir string) (src string, needles []string) {
	t.Helper()
	src = filepath.Join(dir, "zq7x9kw-srcdir")
	makeTree(t, src, map[string]node{
		"zq7x9kw-secrets/zq7x9kw-passwords.txt": {content: revealContent + "\n"},
		"zq7x9kw-notes.md":                      {content: strings.Repeat("zq7x9kw-notes ", 100)},
		"zq7x9kw-empty-dir":                     {kind: "dir"},
		"zq7x9kw-fifo":                          {kind: "fifo"},
		"zq7x9kw-cache/CACHEDIR.TAG":            {content: "Signature: 8a477f597d28d172789f06886806bc55\n"},
	})
	needles = []string{"zq7x9kw", revealContent, src}
	return src, needles
}

// revealed returns where, under root, any of needles is found: in a name (a path below
// root), in a file's bytes, or in an extended attribute's name or value (an S3 server keeps
// object metadata there).
func revealed(t *testing.T, root string, needles []string) []string {
	t.Helper()
	var found []string
	look := func(where string, data []byte) {
		for _, n := range needles {
			if bytes.Contains(data, []byte(n)) {
				found = append(found, where+" holds "+n)
			}
		}
	}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		look("the name "+rel, []byte(rel))
		for name, value := range xattrs(t, path) {
			look("the attribute "+name+" of "+rel, []byte(name+"="+value))
		}
		if d.Type().IsRegular() {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			look(rel, data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// xattrs returns the extended attributes of path (not followed).
func xattrs(t *testing.T, path string) map[string]string {
	t.Helper()
	buf := make([]byte, 1<<16)
	n, err := unix.Llistxattr(path, buf)
	if err != nil {
		return nil
	}
	attrs := map[string]string{}
	for _, name := range strings.Split(string(buf[:n]), "\x00") {
		if name == "" {
			continue
		}
		v := make([]byte, 1<<16)
		if m, err := unix.Lgetxattr(path, name, v); err == nil {
			attrs[name] = string(v[:m])
		}
	}
	return attrs
}

// revealRuns backs up src into the set at loc as a cron job would, several times: a first
// run, a second that reuses what it can, one whose SOURCE is missing (a failed receipt), and
// one with hooks; the --exec-before hook copies the set's lock, held by then, to lockCopy.
// keyArgs encrypt (nil: a plain set).
func revealRuns(t *testing.T, env []string, dir, src, loc, lockFile, lockCopy string, keyArgs []string) {
	t.Helper()
	run := func(want int, args ...string) {
		t.Helper()
		args = append(append([]string{"create", "--output-dir", loc, "--level", "0", "--exclude-caches"}, keyArgs...), args...)
		mustExit(t, backup(t, runOpts{dir: dir, env: env}, args...), want)
	}
	run(exitComplete, src)
	run(exitComplete, "--keep-last", "5", src)
	missing := filepath.Join(dir, "zq7x9kw-missing", filepath.Base(src))
	run(exitFailed, missing)
	run(exitComplete, "--exec-before", "cp "+lockFile+" "+lockCopy, "--exec-after", "true zq7x9kw-hook-command", src)
	if _, err := os.Stat(lockCopy); err != nil {
		t.Fatalf("the hook did not copy the lock: %v", err)
	}
}

func TestSealedFolderSetRevealsNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src, needles := revealTree(t, dir)
	key := newAgeKey(t)
	for _, sealed := range []bool{true, false} {
		set := filepath.Join(dir, "set-plain")
		var keyArgs []string
		if sealed {
			set = filepath.Join(dir, "set-sealed")
			keyArgs = []string{"--recipient", key.recipient, "-i", key.identity}
		}
		lockCopy := filepath.Join(dir, "lock-copy-"+filepath.Base(set))
		revealRuns(t, nil, dir, src, set, filepath.Join(set, ".backup.lock"), lockCopy, keyArgs)
		found := append(revealed(t, set, needles), revealed(t, lockCopy, needles)...)
		switch {
		case sealed && len(found) > 0:
			t.Errorf("the encrypted folder set reveals:\n%s", strings.Join(found, "\n"))
		case !sealed && len(found) == 0:
			t.Error("the plain folder set reveals nothing: the search finds nothing at all")
		}
	}
}

func TestSealedS3SetRevealsNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src, needles := revealTree(t, dir)
	key := newAgeKey(t)
	for _, sealed := range []bool{true, false} {
		s := newS3Set(t)
		var keyArgs []string
		if sealed {
			keyArgs = []string{"--recipients-file", writeRecipients(t, key.recipient)}
		}
		lockCopy := filepath.Join(dir, "lock-copy-"+filepath.Base(s.dir))
		revealRuns(t, s.env, dir, src, s.loc, filepath.Join(s.dir, ".backup.lock"), lockCopy, keyArgs)
		bucket := filepath.Dir(filepath.Dir(s.dir))
		found := append(revealed(t, bucket, needles), revealed(t, lockCopy, needles)...)
		switch {
		case sealed && len(found) > 0:
			t.Errorf("the encrypted bucket set reveals:\n%s", strings.Join(found, "\n"))
		case !sealed && len(found) == 0:
			t.Error("the plain bucket set reveals nothing: the search finds nothing at all")
		}
		if sealed {
			// What a write-only host's runs leave is whole all the same: read with the key.
			r := backup(t, runOpts{dir: dir, env: s.env}, "restore", "-i", key.identity, s.loc, filepath.Join(dir, "restored"))
			mustExit(t, r, exitComplete)
			got, _ := os.ReadFile(filepath.Join(dir, "restored", filepath.Base(src), "zq7x9kw-secrets", "zq7x9kw-passwords.txt"))
			if string(got) != revealContent+"\n" {
				t.Errorf("restored %q", got)
			}
		}
	}
}

// writeRecipients writes a recipients file holding lines and returns its path.
func writeRecipients(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "recipients")
	if err := os.WriteFile(path, []byte("# backup keys\n"+strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
