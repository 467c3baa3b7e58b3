package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"backup/format"
)

func TestCreateMixedTree(t *testing.T) {
	t.Parallel()
	mustRoot(t) // the device node
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{
		"a.txt":            {content: "alpha\n"},
		"empty":            {kind: "dir"},
		"sub/b.bin":        {content: strings.Repeat("\x00\x01binary", 1000)},
		"sub/zero":         {content: ""},
		"naïve café/ü.txt": {content: "utf-8 names\n"},
		"with space.txt":   {content: "spaces\n"},
		"run/ctl.sock":     {kind: "socket"},
		"run/queue":        {kind: "fifo"},
		"dev/null":         {kind: "device"},
		"links/to-file":    {kind: "symlink", content: "../a.txt"},
		"links/to-dir":     {kind: "symlink", content: "../sub"},
		"links/dangling":   {kind: "symlink", content: "../nowhere"},
	})
	if err := os.Link(filepath.Join(dir, "app/a.txt"), filepath.Join(dir, "app/hard.txt")); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.zip")
	r := backup(t, runOpts{dir: dir}, "create", "-o", out, "app")
	if r.code != exitComplete {
		t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, exitComplete, r.stderr)
	}
	rc := readReceipt(t, out+".receipt.json")
	if rc.Status != "complete" || rc.Schema != "backup.receipt/v1" {
		t.Errorf("status %q schema %q, want complete backup.receipt/v1", rc.Status, rc.Schema)
	}
	var skipped []string
	for _, s := range rc.Skipped {
		skipped = append(skipped, s.Path+":"+s.Kind)
	}
	wantSkipped := []string{"app/dev/null:device", "app/links/dangling:symlink", "app/links/to-dir:symlink",
		"app/links/to-file:symlink", "app/run/ctl.sock:socket", "app/run/queue:fifo"}
	if !slices.Equal(skipped, wantSkipped) {
		t.Errorf("skipped %v, want %v", skipped, wantSkipped)
	}
	if len(rc.Warnings) != 0 || len(rc.Excluded) != 0 {
		t.Errorf("warnings %v, excluded %v; want none", rc.Warnings, rc.Excluded)
	}
	entries := readZip(t, out)
	want := map[string]string{
		"app/": "", "app/a.txt": "alpha\n", "app/hard.txt": "alpha\n", "app/empty/": "",
		"app/sub/": "", "app/sub/b.bin": strings.Repeat("\x00\x01binary", 1000), "app/sub/zero": "",
		"app/naïve café/": "", "app/naïve café/ü.txt": "utf-8 names\n", "app/with space.txt": "spaces\n",
		"app/run/": "", "app/dev/": "", "app/links/": "",
	}
	manifest := entries[format.ManifestName]
	delete(entries, format.ManifestName)
	if len(entries) != len(want) {
		t.Errorf("archive holds %d entries, want %d: %v", len(entries), len(want), keys(entries))
	}
	for name, content := range want {
		if got, ok := entries[name]; !ok || got != content {
			t.Errorf("entry %q: got %q (present %v), want %q", name, got, ok, content)
		}
	}
	if !strings.Contains(manifest, `"status":"complete"`) {
		t.Errorf("manifest does not record the status:\n%s", manifest)
	}
	if c := rc.Counts; c.Files != 6 || c.Dirs != 7 || c.Skipped != 6 || c.Lost != 0 {
		t.Errorf("counts %+v, want 6 files, 7 dirs, 6 skipped, 0 lost", c)
	}
}

func keys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
