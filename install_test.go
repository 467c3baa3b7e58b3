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

// TestAttackVersionExitCodes: `backup version --json` whose stdout is a pipe nobody
// reads exited 1, an exit code version's help and the README did not list, while plain
// `backup version` into the same pipe exited 0 though it printed nothing. Both now exit 1,
// as completion does when its script cannot be written, and say why; the help and the
// README list it.
func TestAttackVersionExitCodes(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"version"}, {"version", "--json"}} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		r.Close() // the reader is gone before anything is written
		cmd := exec.Command(binary, args...)
		cmd.Stdout = w
		var stderr strings.Builder
		cmd.Stderr = &stderr
		cmd.Run()
		w.Close()
		if code := cmd.ProcessState.ExitCode(); code != exitFailed || !strings.Contains(stderr.String(), "stdout") {
			t.Errorf("backup %s into a closed pipe: exit %d (%q), want %d and a line saying stdout could not be written", strings.Join(args, " "), code, stderr.String(), exitFailed)
		}
	}
	help := backup(t, runOpts{}, "version", "--help")
	if !strings.Contains(help.stdout, "1 it could not be written") {
		t.Errorf("version's help does not list exit 1:\n%s", help.stdout)
	}
}

// TestAttackDocsUninstallLeavesOthersPages: docs/install.md has make uninstall undo make
// install under the same PREFIX, and a packager's PREFIX=/usr holds other packages' pages
// too. Uninstall removed man1/backup-*.1, every page whose name starts so: backup-manager's
// own page went with ours.
func TestAttackDocsUninstallLeavesOthersPages(t *testing.T) {
	mustTool(t, "make")
	dest := t.TempDir()
	bin := filepath.Join(t.TempDir(), "backup")
	vars := []string{"DESTDIR=" + dest, "PREFIX=/usr", "BIN=" + bin}
	makeTarget(t, append([]string{"install"}, vars...)...)
	other := filepath.Join(dest, "usr/share/man/man1/backup-manager.1")
	if err := os.WriteFile(other, []byte(".TH BACKUP-MANAGER 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	makeTarget(t, append([]string{"uninstall"}, vars...)...)
	if _, err := os.Stat(other); err != nil {
		t.Errorf("make uninstall removed another package's page: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dest, "usr/share/man/man1/backup-create.1")); err == nil {
		t.Errorf("make uninstall left backup-create.1")
	}
}

// TestAttackDocsVersionFlagExitCode: docs/install.md has backup --version print what
// backup version prints first, and the README has version exit 1 when that cannot be
// written. --version into a closed pipe exited 2, a usage error with "Run 'backup help' for
// usage", which tells a script its arguments were wrong.
func TestAttackDocsVersionFlagExitCode(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close() // the reader is gone before anything is written
	cmd := exec.Command(binary, "--version")
	cmd.Stdout = w
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.Run()
	w.Close()
	if code := cmd.ProcessState.ExitCode(); code != exitFailed || strings.Contains(stderr.String(), "usage") {
		t.Errorf("backup --version into a closed pipe: exit %d (%q), want %d and no usage hint", code, stderr.String(), exitFailed)
	}
	if got := backup(t, runOpts{}, "--version"); got.code != exitComplete || !strings.HasPrefix(got.stdout, "backup ") {
		t.Errorf("backup --version: exit %d, %q", got.code, got.stdout)
	}
}
