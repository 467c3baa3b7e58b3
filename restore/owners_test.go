package restore

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"backup/format"
)

// TestRestoreOwners restores, as root, entries whose manifest records an owner by a name
// this system knows (nobody, nogroup) under numbers it does not use for them: by default the
// names decide, --numeric-owner the numbers, --no-same-owner neither (root keeps them). The
// setuid bit comes back only with SamePermissions and the owner.
func TestRestoreOwners(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("this test needs root, and CI runs as root")
		}
		t.Skip("needs root")
	}
	byName := &format.Meta{UID: 12345, GID: 12346, User: "nobody", Group: "nogroup"}
	unknown := &format.Meta{UID: 12347, GID: 12348, User: "no-such-user-here", Group: "no-such-group-here"}
	entries := []linkEntry{{name: "app/", owner: byName}, {name: "app/f", body: "x", owner: byName},
		{name: "app/u", body: "y", owner: unknown}, {name: "app/l", target: "f", owner: byName}}
	m := format.Manifest{Files: []format.File{{Path: "app/f", Size: 1, SHA256: sumOf("x"), Meta: byName},
		{Path: "app/u", Size: 1, SHA256: sumOf("y"), Meta: unknown}},
		Dirs: []format.Dir{{Path: "app", Meta: *byName}}, Symlinks: []format.Symlink{{Path: "app/l", Target: "f", Meta: *byName}}}
	data := buildLinkZip(t, entries, &m)
	tests := []struct {
		name       string
		opts       Options
		named, unk [2]uint32 // owner of app, app/f and app/l; of app/u
	}{
		{"by name, else by number", Options{}, [2]uint32{65534, 65534}, [2]uint32{12347, 12348}},
		{"numeric", Options{NumericOwner: true}, [2]uint32{12345, 12346}, [2]uint32{12347, 12348}},
		{"no owners", Options{NoSameOwner: true}, [2]uint32{0, 0}, [2]uint32{0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dest := t.TempDir()
			if _, res := restoreInto(t, data, dest, tt.opts); res == nil || len(res.Failed)+len(res.Damaged) > 0 {
				t.Fatalf("result %+v", res)
			}
			for name, want := range map[string][2]uint32{"app": tt.named, "app/f": tt.named, "app/l": tt.named, "app/u": tt.unk} {
				var st syscall.Stat_t
				if err := syscall.Lstat(filepath.Join(dest, name), &st); err != nil {
					t.Fatal(err)
				}
				if got := [2]uint32{st.Uid, st.Gid}; got != want {
					t.Errorf("%s: owner %v, want %v", name, got, want)
				}
			}
		})
	}
}

// TestRestoreSetuid gives a setuid, setgid file its bits back only when asked and only
// with its owner.
func TestRestoreSetuid(t *testing.T) {
	daemon := &format.Meta{UID: 1, GID: 1}
	m := format.Manifest{Files: []format.File{{Path: "su", Size: 1, SHA256: sumOf("x"), Meta: daemon}}}
	data := buildLinkZipMode(t, "su", "x", 0o6755, daemon, &m)
	tests := []struct {
		name string
		opts Options
		want os.FileMode
	}{
		{"dropped by default", Options{}, 0o755},
		{"kept when asked", Options{SamePermissions: true}, 0o755 | os.ModeSetuid | os.ModeSetgid},
		{"dropped without the owner", Options{SamePermissions: true, NoSameOwner: true}, 0o755},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.want
			if os.Geteuid() != 0 { // the owner is never restored, so neither are the bits
				want = 0o755
			}
			dest := t.TempDir()
			restoreInto(t, data, dest, tt.opts)
			info, err := os.Stat(filepath.Join(dest, "su"))
			if err != nil {
				t.Fatal(err)
			}
			if got := info.Mode(); got != want {
				t.Errorf("mode %v, want %v", got, want)
			}
		})
	}
}
