package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAttackCreateIntoSetWithoutItsLock: a run that is not the set's (-o naming the set's
// folder, a file inside it, or no -o from inside it, whose default --output-dir "." is no set)
// wrote an archive named as the set's runs are, without the set's lock or a read-back: status
// listed it among the set's runs ("LATEST is not the newest complete backup"), prune counted
// it, and -o SET/RUN.zip --force replaced one of the set's backups; a --receipt there, named
// as a run's, was listed as a run of unknown status. A set's folder holds what its runs
// write: each is refused (exit 2), nothing written, and the error says to use --output-dir.
func TestAttackCreateIntoSetWithoutItsLock(t *testing.T) {
	dir := t.TempDir()
	src, set := filepath.Join(dir, "app"), filepath.Join(dir, "set")
	makeTree(t, src, map[string]node{"a.txt": {content: "backed up\n"}})
	mustExit(t, backup(t, runOpts{}, "create", "-q", "--output-dir", set, src), exitComplete)
	run := readLatest(t, set)
	before := listDir(t, set)
	for _, c := range []struct {
		name string
		cwd  string
		args []string
	}{
		{"-o SET", dir, []string{"-o", set}},
		{"-o SET/x.zip", dir, []string{"-o", filepath.Join(set, "x.zip")}},
		{"-o SET/RUN --force", dir, []string{"--force", "-o", filepath.Join(set, run)}},
		{"no -o, in SET", set, nil},
		{"--receipt SET/RUN.receipt.json", dir, []string{"-o", filepath.Join(dir, "elsewhere.zip"), "--receipt", filepath.Join(set, "app-20991231T000000Z.zip.receipt.json")}},
	} {
		r := backup(t, runOpts{dir: c.cwd}, slices.Concat([]string{"create", "-q"}, c.args, []string{src})...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "--output-dir") {
			t.Errorf("%s: exit %d, want %d (usage) and a line naming --output-dir; stderr:\n%s", c.name, r.code, exitUsage, r.stderr)
		}
		if after := listDir(t, set); !slices.Equal(after, before) {
			t.Errorf("%s: the set holds %v, want %v as before", c.name, after, before)
		}
	}
	// A folder of plain archives made with -o is no set: its archives do not make it one.
	plain := filepath.Join(dir, "plain")
	if err := os.Mkdir(plain, 0o755); err != nil {
		t.Fatal(err)
	}
	mustExit(t, backup(t, runOpts{}, "create", "-q", "-o", plain, src), exitComplete)
	mustExit(t, backup(t, runOpts{}, "create", "-q", "-o", plain, src), exitComplete)
}
