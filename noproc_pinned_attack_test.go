package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestAttackPinnedArchiveWithoutProc reads an archive and a set with /proc not mounted (a
// chroot or a container without it: unshare -m, umount /proc). verify, list of a set and
// restore from a set opened the archive they pinned again through /proc/self/fd, and failed
// a good backup, exit 1, "a.zip: no such file or directory", naming a file that was there.
// Correct: each reads the archive by its name again, the same file as the one pinned, exit 0.
func TestAttackPinnedArchiveWithoutProc(t *testing.T) {
	mustRoot(t) // unshare -m, umount
	mustTool(t, "unshare")
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src"), map[string]node{"f.txt": {content: "hi\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "a.zip", "src"), exitComplete)
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "set", "src"), exitComplete)
	for _, args := range [][]string{
		{"verify", "-q", "a.zip"},
		{"verify", "-q", "set"},
		{"list", "set"},
		{"restore", "-q", "set", "dest"},
	} {
		t.Run(args[0]+" "+args[len(args)-1], func(t *testing.T) {
			cmd := exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c", `umount -l /proc && exec "$BIN" "$@"`, "sh")
			cmd.Args = append(cmd.Args, args...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "BIN="+binary)
			r := runCmd(t, cmd)
			if r.code != exitComplete {
				t.Errorf("exit %d, want %d; stderr:\n%s", r.code, exitComplete, r.stderr)
			}
		})
	}
	assertContent(t, filepath.Join(dir, "dest/src/f.txt"), "hi\n")
}
