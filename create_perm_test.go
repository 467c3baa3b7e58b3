package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCreateUnreadable runs the binary as nobody over a tree with an unreadable file, an
// unreadable directory and a directory whose names can be listed but not stat'ed: each is
// lost, with its cause, and everything else is archived.
func TestCreateUnreadable(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := sharedTempDir(t)
	makeTree(t, filepath.Join(dir, "app"), map[string]node{
		"ok.txt":          {content: "readable\n"},
		"secret":          {content: "top secret\n", mode: 0o200},
		"locked":          {kind: "dir", mode: 0o300},
		"locked/inside":   {content: "cannot list me\n"},
		"listonly":        {kind: "dir", mode: 0o444},
		"listonly/x":      {content: "x\n"},
		"listonly/y":      {content: "y\n"},
		"run/ctl.sock":    {kind: "socket"},
		"sub/visible.txt": {content: "visible\n"},
	})
	out := filepath.Join(dir, "out")
	makeTree(t, out, map[string]node{".": {kind: "dir", mode: 0o777}})
	r := backup(t, runOpts{dir: dir, uid: nobody}, "create", "--output-dir", out, "app")
	if r.code != exitIncomplete {
		t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, exitIncomplete, r.stderr)
	}
	archives, _ := filepath.Glob(filepath.Join(out, "app-*.zip"))
	if len(archives) != 1 {
		t.Fatalf("archives %v, want one", archives)
	}
	rc := readReceipt(t, archives[0]+".receipt.json")
	if rc.Status != "incomplete" {
		t.Errorf("status %q, want incomplete", rc.Status)
	}
	var warnings []string
	for _, w := range rc.Warnings {
		if !w.Lost {
			t.Errorf("warning %+v not lost", w)
		}
		warnings = append(warnings, w.Path+" "+w.Op+": "+w.Error)
	}
	want := []string{
		"app/listonly/x open: permission denied",
		"app/listonly/y open: permission denied",
		"app/locked readdir: permission denied",
		"app/secret open: permission denied",
	}
	if !slices.Equal(warnings, want) {
		t.Errorf("warnings\n%q\nwant\n%q", warnings, want)
	}
	if rc.Counts.Lost != 4 || rc.Counts.Files != 2 {
		t.Errorf("counts %+v, want 4 lost, 2 files", rc.Counts)
	}
	entries := readZip(t, archives[0])
	for _, name := range []string{"app/ok.txt", "app/sub/visible.txt"} {
		if _, ok := entries[name]; !ok {
			t.Errorf("%s missing from the archive", name)
		}
	}
	for _, name := range []string{"app/secret", "app/locked/inside", "app/listonly/x"} {
		if _, ok := entries[name]; ok {
			t.Errorf("%s is in the archive, but could not be read", name)
		}
	}
	for _, line := range []string{"lost app/secret: open: permission denied", "lost app/locked: readdir: permission denied"} {
		if !strings.Contains(r.stderr, line) {
			t.Errorf("stderr lacks %q:\n%s", line, r.stderr)
		}
	}
}
