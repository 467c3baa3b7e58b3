package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackS3SpoolInOtherUsersCache: restore and verify of a set in a bucket keep the
// blocks they fetch in a spool in the cache folder, $XDG_CACHE_HOME/backup else
// ~/.cache/backup. Run as root by sudo keeping HOME=/home/alice, they made
// /home/alice/.cache and /home/alice/.cache/backup (root's, 0700: alice's own cache folder
// was no longer hers to write), and when alice's folder was there they wrote the archive's
// bytes into it: alice, who owns the folder, may put a symlink there to a file system she
// reads raw (an image she mounted) or serves herself, and read root's backup as it is
// spooled. create's copy in the same cache folder is refused in such a folder
// (docs/reuse.md: "a cache folder with a folder on its path ... that another user owns");
// the spool was not held to that rule, and create made the folders before it checked them.
// Correct: the spool's folder passes the same check as create's cache folder; where it
// does not, nothing is made or written there, and the blocks read twice are fetched twice.
func TestAttackS3SpoolInOtherUsersCache(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	f := newSpoolFixture(t)
	for _, tc := range []struct {
		name    string
		cache   bool // alice's ~/.cache/backup is there, hers
		command string
	}{{"no cache folder", false, "verify"}, {"her cache folder", true, "restore"}, {"a run into the set", false, "create"}} {
		home := filepath.Join(f.dir, "home-"+strings.ReplaceAll(tc.name, " ", "-"))
		if err := os.Mkdir(home, 0o755); err != nil {
			t.Fatal(err)
		}
		if tc.cache {
			if err := os.MkdirAll(filepath.Join(home, ".cache", "backup"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := exec.Command("chown", "-R", "65534:65534", filepath.Join(home, ".cache")).Run(); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chown(home, nobody, nobody); err != nil {
			t.Fatal(err)
		}
		log := filepath.Join(f.dir, "strace-"+filepath.Base(home))
		args := []string{tc.command, f.s.loc}
		switch tc.command {
		case "restore":
			args = append(args, filepath.Join(f.dir, "dest"))
		case "create": // its copy of the archive goes in the same cache folder
			args = []string{"create", "-q", "--output-dir", f.s.loc, "app"}
		}
		cmd := exec.Command("strace", append([]string{"-f", "-qq", "-o", log, "-e", "trace=openat,mkdirat,mkdir", binary}, args...)...)
		cmd.Dir = f.dir
		cmd.Env = append(append(os.Environ(), f.s.env...), "HOME="+home, "XDG_CACHE_HOME=")
		r := runCmd(t, cmd)
		mustExit(t, r, exitComplete)
		data, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(data), "\n") {
			if strings.Contains(l, home) && (strings.Contains(l, "O_TMPFILE") || strings.Contains(l, "mkdir")) {
				t.Errorf("%s, %s: as root, in alice's folder: %s", tc.name, args[0], l)
			}
		}
		if !tc.cache {
			if _, err := os.Lstat(filepath.Join(home, ".cache")); err == nil {
				t.Errorf("%s: root made %s in alice's home", tc.name, filepath.Join(home, ".cache"))
			}
		}
	}
}
