package main

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
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

// TestPruneAtticSharedRacing races two prunes of two sets into one attic on another file
// system (each copies, under a journal of its own), 20 times: both succeed, the attic holds
// whole pairs only, and no temp file or journal is left, though each prune sweeps the attic
// while the other one copies into it.
func TestPruneAtticSharedRacing(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := t.TempDir()
	attic := filepath.Join(dir, "attic")
	makeTree(t, attic, map[string]node{".": {kind: "dir"}})
	mountTmpfs(t, attic, "64m")
	sets := []string{filepath.Join(dir, "one"), filepath.Join(dir, "two")}
	for i, set := range sets {
		makeTree(t, filepath.Join(dir, "app"+strconv.Itoa(i)), map[string]node{"a": {content: "a\n"}})
		mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app"+strconv.Itoa(i)), exitComplete)
	}
	for round := range 20 {
		for i, set := range sets {
			mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app"+strconv.Itoa(i)), exitComplete)
		}
		runs := startPair(t, dir, []string{"prune", "--keep-last", "1", "--attic", attic, sets[0]},
			[]string{"prune", "--keep-last", "1", "--attic", attic, sets[1]})
		for _, cmd := range runs {
			if code := cmd.ProcessState.ExitCode(); code != exitComplete {
				t.Fatalf("round %d: %v: exit %d, stderr %s", round, cmd.Args[1:], code, cmd.Stderr)
			}
		}
		if extra, _ := filepath.Glob(filepath.Join(attic, ".*")); len(extra) > 0 {
			t.Fatalf("round %d: left in the attic: %v", round, extra)
		}
		for _, set := range sets {
			checkSetWhole(t, set, attic)
		}
	}
	// Every pruned run is in the attic whole: 20 from each set, each with its receipt.
	files := listDir(t, attic)
	for _, f := range files {
		if archive, ok := strings.CutSuffix(f, ".receipt.json"); ok && !slices.Contains(files, archive) {
			t.Errorf("the attic holds %s without its archive", f)
		} else if !ok && !slices.Contains(files, f+".receipt.json") {
			t.Errorf("the attic holds %s without its receipt", f)
		}
	}
	if len(files) != 2*2*20 {
		t.Errorf("the attic holds %d files, want %d: every pruned run's pair", len(files), 2*2*20)
	}
}
