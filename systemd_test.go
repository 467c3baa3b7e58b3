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

// TestAttackDocsUnitsMetricsOneSeriesEach runs the ExecStart of each service in
// contrib/systemd that writes a metrics file, as docs/operations.md sets them up (one set,
// one collector folder), and reads the folder as node_exporter does: a series (name and
// labels) held by two files is refused there (the docs say so of status and sets), which
// logs an error at every scrape and serves one file's value, the other's hidden.
// backup@ (create) and backup-check@ (status) both wrote backup_last_status{set=...} and
// the other per-run series of the same set.
func TestAttackDocsUnitsMetricsOneSeriesEach(t *testing.T) {
	dir := t.TempDir()
	set, collector, src := filepath.Join(dir, "set"), filepath.Join(dir, "collector"), filepath.Join(dir, "src", "app")
	makeTree(t, src, map[string]node{"a.txt": {content: "a\n"}})
	if err := os.Mkdir(collector, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, unit := range []string{"backup@.service", "backup-check@.service"} {
		args := unitExecStart(t, filepath.Join("contrib/systemd", unit), strings.NewReplacer(
			"/var/backups/%i", set, "/var/lib/prometheus/node-exporter", collector,
			"%i", "app", "$BACKUP_FLAGS", "", "$SOURCE", src))
		if args[0] != "/usr/local/bin/backup" {
			t.Fatalf("%s runs %s", unit, args[0])
		}
		if r := backup(t, runOpts{}, args[1:]...); r.code != 0 {
			t.Fatalf("%s: %v: exit %d, %s", unit, args, r.code, r.stderr)
		}
	}
	files, _ := filepath.Glob(filepath.Join(collector, "*.prom"))
	seen := map[string]string{} // series -> file that holds it
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			series := line[:strings.LastIndexByte(line, ' ')]
			if other, ok := seen[series]; ok && other != file {
				t.Errorf("%s is in %s and %s: node_exporter serves one of them", series, filepath.Base(other), filepath.Base(file))
			}
			seen[series] = file
		}
	}
}

// unitExecStart returns the words of a unit's ExecStart (continuation lines joined), each
// through subst (the instance's paths), empty words dropped.
func unitExecStart(t *testing.T, unit string, subst *strings.Replacer) []string {
	t.Helper()
	data, err := os.ReadFile(unit)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(data), "\\\n", " ")
	for _, line := range strings.Split(text, "\n") {
		cmd, ok := strings.CutPrefix(line, "ExecStart=")
		if !ok {
			continue
		}
		var words []string
		for _, w := range strings.Fields(cmd) {
			if w = subst.Replace(w); w != "" {
				words = append(words, w)
			}
		}
		return words
	}
	t.Fatalf("%s has no ExecStart", unit)
	return nil
}
