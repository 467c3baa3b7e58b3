package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSystemdUnits checks the units in contrib/systemd with systemd-analyze verify, as the
// instance "app" and with the test's binary at the path ExecStart names: no warning at all
// (verify exits 0 on an unknown key, so its output must be empty).
func TestSystemdUnits(t *testing.T) {
	mustTool(t, "systemd-analyze")
	units, err := filepath.Glob("contrib/systemd/*@.*")
	if err != nil || len(units) == 0 {
		t.Fatalf("no units in contrib/systemd: %v", err)
	}
	dir := t.TempDir()
	var args []string
	for _, unit := range units {
		data, err := os.ReadFile(unit)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.ReplaceAll(string(data), "/usr/local/bin/backup", binary)
		name := strings.Replace(filepath.Base(unit), "@.", "@app.", 1)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, "./"+name)
	}
	cmd := exec.Command("systemd-analyze", append([]string{"verify", "--man=no"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
