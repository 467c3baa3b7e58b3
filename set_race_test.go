package main

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSetRacingWriters races two real processes on one set, 20 times for each pair of
// writers: create against adopt, activate and prune --attic, and two adopts of one archive.
// With --wait every run succeeds, one after the other; after each round the set is healthy
// and verifies, holds no temp file, every archive has its receipt, and the attic holds whole
// pairs only.
func TestSetRacingWriters(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		other func(set, older, elsewhere, attic string) []string
	}{
		{"adopt", func(set, _, elsewhere, _ string) []string { return []string{"adopt", set, elsewhere} }},
		{"activate", func(set, older, _, _ string) []string { return []string{"activate", set, older} }},
		{"prune", func(set, _, _, attic string) []string {
			return []string{"prune", "--keep-last", "2", "--attic", attic, set}
		}},
		{"adopt twice", func(set, _, elsewhere, _ string) []string { return []string{"adopt", set, elsewhere} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir, set, older, elsewhere := adoptSet(t)
			attic := filepath.Join(dir, "attic")
			makeTree(t, attic, map[string]node{".": {kind: "dir"}})
			first := []string{"create", "--output-dir", set, "app"}
			if tt.name == "adopt twice" {
				first = []string{"adopt", set, elsewhere}
			}
			for round := range 20 {
				runs := startPair(t, dir, withWait(first), withWait(tt.other(set, older, elsewhere, attic)))
				for _, cmd := range runs {
					if code := cmd.ProcessState.ExitCode(); code != exitComplete {
						t.Fatalf("round %d: %v: exit %d, stderr %s", round, cmd.Args[1:], code, cmd.Stderr)
					}
				}
				checkSetWhole(t, set, attic)
			}
		})
	}
}

// withWait adds --wait to a command's arguments, after its name.
func withWait(args []string) []string {
	return append([]string{args[0], "--wait", "1m"}, args[1:]...)
}

// startPair starts two runs of the binary at once and waits for both.
func startPair(t *testing.T, dir string, a, b []string) []*exec.Cmd {
	t.Helper()
	cmds := []*exec.Cmd{exec.Command(binary, a...), exec.Command(binary, b...)}
	for _, cmd := range cmds {
		cmd.Dir = dir
		cmd.Stdout, cmd.Stderr = &strings.Builder{}, &strings.Builder{}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	for _, cmd := range cmds {
		cmd.Wait()
	}
	return cmds
}

// checkSetWhole checks what any writer must leave: a healthy set whose LATEST verifies, no
// temp file, each archive with its receipt, and in the attic whole pairs.
func checkSetWhole(t *testing.T, set, attic string) {
	t.Helper()
	if r := backup(t, runOpts{}, "status", set); r.code != exitComplete {
		t.Fatalf("status: exit %d, %s", r.code, r.stderr)
	}
	if r := backup(t, runOpts{}, "verify", "-q", set); r.code != exitComplete {
		t.Fatalf("verify: exit %d, %s", r.code, r.stderr)
	}
	for _, dir := range []string{set, attic} {
		if temps, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*")); len(temps) > 0 {
			t.Fatalf("temp files left: %v", temps)
		}
		files := setArchives(t, dir)
		for _, f := range files {
			pair := f + ".receipt.json"
			if strings.HasSuffix(f, ".receipt.json") {
				pair = strings.TrimSuffix(f, ".receipt.json")
			}
			if !slices.Contains(files, pair) {
				t.Fatalf("%s holds %s without %s: %v", dir, f, pair, files)
			}
		}
	}
}
