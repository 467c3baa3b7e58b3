package restore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestAttackRemovedDirHidesENOSPC: DEST is a tmpfs whose inode table fills while the
// restore runs, and the folder d it is writing into is removed (rm -r DEST/d) before d/two.
// tmpfs makes an unnamed file in a removed folder, so the kernel's answer is the full
// table: ENOSPC, which stops a restore (fatalErrnos), as it does with d in place. A first
// removedDir worded any error as the folder's removal once its link count was 0 (attack
// pass 22): d/two and d/three failed as moved, and the restore carried on.
func TestAttackRemovedDirHidesENOSPC(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounts a tmpfs")
	}
	for _, remove := range []bool{false, true} {
		t.Run(fmt.Sprintf("removed=%t", remove), func(t *testing.T) {
			dest := filepath.Join(t.TempDir(), "dest")
			if err := os.Mkdir(dest, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := unix.Mount("none", dest, "tmpfs", 0, "size=1m,nr_inodes=64"); err != nil {
				t.Skip(err)
			}
			defer unix.Unmount(dest, unix.MNT_DETACH)
			entries := []zent{{name: "a/"}, {name: "a/x", body: "x"}, {name: "d/"}, {name: "d/one", body: "1"},
				{name: "d/two", body: "2"}, {name: "d/three", body: "3"}}
			defer func(open func(int, uint32) (int, error)) { openUnnamed = open }(openUnnamed)
			real, calls := openUnnamed, 0
			openUnnamed = func(dfd int, perm uint32) (int, error) {
				if calls++; calls == 3 { // d/two
					if remove {
						if err := os.RemoveAll(filepath.Join(dest, "d")); err != nil {
							t.Fatal(err)
						}
					}
					for i := 0; ; i++ { // another process fills the file system's inode table
						f, err := os.Create(filepath.Join(dest, fmt.Sprintf("fill%d", i)))
						if err != nil {
							break
						}
						f.Close()
					}
				}
				return real(dfd, perm)
			}
			r := openZip(t, buildZip(t, entries, true))
			plan, err := NewPlan(t.Context(), r, dest, Options{Jobs: 1})
			if err != nil || !plan.OK() {
				t.Fatalf("NewPlan: %v", err)
			}
			res, err := plan.Run(t.Context())
			if calls < 3 {
				t.Fatalf("%d unnamed files made, want 3", calls)
			}
			if !errors.Is(err, unix.ENOSPC) {
				var failed []string
				if res != nil {
					failed = problemStrings(res.Failed)
				}
				t.Errorf("Run: %v, failed %q; want the restore stopped by ENOSPC (no space left on device)", err, failed)
			}
		})
	}
}
