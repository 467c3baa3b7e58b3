package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackSetsUnlistedLostFound: the fleet's sets live on a file system of their own,
// mounted on /backups, whose root holds lost+found (root's, mode 0700, as mkfs.ext4 makes
// it). backup sets run by the monitoring user (not root, as node_exporter's textfile cron
// runs) exited 1 on every run ('open /backups/lost+found: permission denied') and wrote
// backup_sets_listed 0, which pages (BackupSetsUnlisted), over a healthy fleet: find, du and
// restic's users meet that folder every day, and it holds no set (only what fsck recovers,
// which root alone reads). lost+found at the root of a mount that cannot be opened is
// passed over; any other folder that cannot be listed is still said, exit 1, as before,
// and so is a lost+found that is not at a mount's root.
func TestAttackSetsUnlistedLostFound(t *testing.T) {
	mustRoot(t)
	t.Parallel()
	dir := sharedTempDir(t)
	backups := filepath.Join(dir, "backups")
	if err := os.Mkdir(backups, 0o755); err != nil {
		t.Fatal(err)
	}
	mountTmpfs(t, backups, "4m")
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"a": {content: "a\n"}})
	if err := os.Chmod(backups, 0o777); err != nil {
		t.Fatal(err)
	}
	mustExit(t, backup(t, runOpts{dir: dir, uid: nobody}, "create", "-q", "--output-dir", "backups/app", "src/app"), exitComplete)
	if err := os.Mkdir(filepath.Join(backups, "lost+found"), 0o700); err != nil {
		t.Fatal(err)
	}
	metrics := filepath.Join(dir, "sets.prom")
	r := backup(t, runOpts{dir: dir, uid: nobody}, "sets", "--max-age", "1h", "--metrics-file", metrics, "backups")
	mustExit(t, r, exitComplete)
	if got := setsColumn(r.stdout); len(got) != 1 || !strings.HasPrefix(got[0], "ok ") || r.stderr != "" {
		t.Errorf("sets: %q, stderr %q; want the one set, healthy, and nothing said", got, r.stderr)
	}
	if m := string(readFile(t, metrics)); !strings.Contains(m, "backup_sets_listed 1") {
		t.Errorf("metrics:\n%s\nwant backup_sets_listed 1", m)
	}

	// Any other folder that cannot be listed may hide sets: still said.
	for _, p := range []string{"private", "app2/lost+found"} {
		if err := os.MkdirAll(filepath.Join(backups, p), 0o700); err != nil {
			t.Fatal(err)
		}
		os.Chmod(filepath.Dir(filepath.Join(backups, p)), 0o755)
		r = backup(t, runOpts{dir: dir, uid: nobody}, "sets", "backups")
		mustExit(t, r, exitFailed)
		if !strings.Contains(r.stderr, p+": permission denied") {
			t.Errorf("%s: stderr %q, want it named as a folder that cannot be listed", p, r.stderr)
		}
		os.RemoveAll(filepath.Join(backups, strings.Split(p, "/")[0]))
	}
}
