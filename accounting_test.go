package main

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"backup/format"
)

// randomTree describes a generated tree of files, directories, special files and unreadable
// paths, the same for the same seed.
func randomTree(seed uint64, size int) map[string]node {
	rng := rand.New(rand.NewPCG(seed, seed))
	nodes := map[string]node{}
	dirs := []string{"."}
	for i := range size {
		parent := dirs[rng.IntN(len(dirs))]
		name := path.Join(parent, fmt.Sprintf("n%03d", i))
		switch r := rng.IntN(100); {
		case r < 15:
			nodes[name] = node{kind: "dir"}
			dirs = append(dirs, name)
		case r < 20:
			nodes[name] = node{kind: "symlink", content: "n000"}
		case r < 23:
			nodes[name] = node{kind: "fifo"}
		case r < 26:
			nodes[name] = node{kind: "socket"}
		case r < 29:
			nodes[name] = node{content: "secret", mode: 0o200}
		case r < 31:
			nodes[name] = node{kind: "dir", mode: 0o300}
			dirs = append(dirs, name)
		case r < 33:
			nodes[name+".tmp"] = node{content: "excluded by pattern"}
		default:
			nodes[name] = node{content: strings.Repeat(name, rng.IntN(50))}
		}
	}
	return nodes
}

// TestAccounting checks the promise on generated trees: every path the walk meets is
// archived, skipped, excluded or warned, exactly once; every path below a directory that
// was excluded or could not be listed was never met.
func TestAccounting(t *testing.T) {
	t.Parallel()
	mustRoot(t) // unreadable paths, as nobody
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			dir := sharedTempDir(t)
			makeTree(t, filepath.Join(dir, "src"), randomTree(seed, 120))
			makeTree(t, filepath.Join(dir, "out"), map[string]node{".": {kind: "dir", mode: 0o777}})
			out := filepath.Join(dir, "out", "a.zip")
			r := backup(t, runOpts{dir: dir, uid: nobody}, "create", "-x", "*.tmp", "-o", out, "src")
			if r.code != exitComplete && r.code != exitIncomplete {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			checkAccounting(t, filepath.Join(dir, "src"), out)
		})
	}
}

func checkAccounting(t *testing.T, src, out string) {
	t.Helper()
	rc := readReceipt(t, out+".receipt.json")
	fates := map[string][]string{} // stored name -> where it ended
	for name := range readZip(t, out) {
		if name != format.ManifestName {
			fates[strings.TrimSuffix(name, "/")] = append(fates[strings.TrimSuffix(name, "/")], "archived")
		}
	}
	unmet := map[string]bool{} // directories whose contents were never met
	for _, s := range rc.Skipped {
		fates[s.Path] = append(fates[s.Path], "skipped")
	}
	for _, e := range rc.Excluded {
		fates[e.Path] = append(fates[e.Path], "excluded")
		unmet[e.Path] = true
	}
	for _, w := range rc.Warnings {
		if w.Op == "readdir" {
			unmet[w.Path] = true
			continue // the directory itself is stored; its contents are unknown
		}
		fates[w.Path] = append(fates[w.Path], "warned "+w.Op)
	}
	filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(filepath.Dir(src), p)
		name := filepath.ToSlash(rel)
		for dir := path.Dir(name); dir != "."; dir = path.Dir(dir) {
			if unmet[dir] {
				if len(fates[name]) > 0 {
					t.Errorf("%s: %v, but its directory %s was never listed", name, fates[name], dir)
				}
				return nil
			}
		}
		if got := fates[name]; len(got) != 1 {
			t.Errorf("%s ended in %v, want exactly one place", name, got)
		}
		delete(fates, name)
		return nil
	})
	for name, got := range fates {
		t.Errorf("%s: %v, but it is not in the source", name, got)
	}
}
