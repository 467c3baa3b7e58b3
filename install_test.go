package main

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMakeInstall runs make install and make uninstall into a DESTDIR, as a packager does:
// the stamped binary, the man pages and the completions land where docs/install.md says, and
// uninstall leaves no file behind.
func TestMakeInstall(t *testing.T) {
	mustTool(t, "make")
	dest := t.TempDir()
	bin := filepath.Join(t.TempDir(), "backup")
	vars := []string{"DESTDIR=" + dest, "PREFIX=/usr", "BIN=" + bin, "VERSION=9.8.7"}
	makeTarget(t, append([]string{"install"}, vars...)...)
	for _, path := range []string{"bin/backup", "share/man/man1/backup.1", "share/man/man1/backup-create.1",
		"share/bash-completion/completions/backup", "share/zsh/site-functions/_backup",
		"share/fish/vendor_completions.d/backup.fish"} {
		info, err := os.Stat(filepath.Join(dest, "usr", path))
		if err != nil {
			t.Errorf("after make install: %v", err)
		} else if info.Size() == 0 {
			t.Errorf("after make install: %s is empty", path)
		}
	}
	out, err := exec.Command(filepath.Join(dest, "usr/bin/backup"), "version").Output()
	if got, want := string(out), "backup 9.8.7\n"; err != nil || !strings.HasPrefix(got, want) {
		t.Errorf("installed backup version = %q, %v; want it to start with %q", got, err, want)
	}
	makeTarget(t, append([]string{"uninstall"}, vars...)...)
	filepath.WalkDir(dest, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			t.Errorf("after make uninstall: %s is left", path)
		}
		return nil
	})
}

func makeTarget(t *testing.T, args ...string) {
	t.Helper()
	cmd := exec.Command("make", args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
