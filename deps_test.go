package main

import (
	"go/build"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// importRules is the policy of which package may import which, as Go's own
// src/go/build/deps_test.go writes it down: a move that breaks a rule fails make test. Each
// package of the module names the packages of the module it may import, and the modules
// outside the standard library it may use. A package missing here fails the test: a new
// room is placed on purpose. Test files are free.
var importRules = map[string]struct{ ours, theirs []string }{
	// Leaves: they know nothing of backups, archives or sets.
	"backup/eintr":      {nil, []string{"golang.org/x/sys"}},
	"backup/atomicfile": {[]string{"backup/eintr"}, []string{"golang.org/x/sys"}},
	"backup/walker":     {[]string{"backup/eintr"}, []string{"golang.org/x/sys"}},
	"backup/skiprules":  {nil, nil},
	// The one check of a command's outputs: paths and files, nothing of backups.
	"backup/pathcheck": {[]string{"backup/eintr"}, []string{"golang.org/x/sys"}},
	// The records third parties read, and their codecs: the standard library only.
	"backup/format":     {[]string{"backup/atomicfile"}, nil},
	"backup/metrics":    {[]string{"backup/atomicfile"}, nil},
	"backup/sqlitesnap": {[]string{"backup/atomicfile", "backup/eintr"}, []string{"modernc.org/sqlite", "modernc.org/libc", "golang.org/x/sys"}},
	// The zip container knows nothing of restore, runs, reports, sets or storage.
	"backup/archive": {[]string{"backup/format", "backup/walker", "backup/skiprules", "backup/atomicfile", "backup/eintr"},
		[]string{"github.com/klauspost/compress", "golang.org/x/sys"}},
	"backup/restore": {[]string{"backup/archive", "backup/format", "backup/walker", "backup/skiprules", "backup/atomicfile", "backup/eintr"},
		[]string{"golang.org/x/sys"}},
	// The engine reports through callbacks: never the reporter, never the set.
	"backup/engine": {[]string{"backup/archive", "backup/format", "backup/walker", "backup/skiprules", "backup/atomicfile", "backup/sqlitesnap", "backup/seal", "backup/eintr"},
		[]string{"golang.org/x/sys"}},
	// Encryption with age: keys, the age stream of an archive, random access to an encrypted
	// one. It knows no zip, run or set; format gives it the receipt's summary.
	"backup/seal": {[]string{"backup/format"}, []string{"filippo.io/age", "golang.org/x/crypto/ssh"}},
	// The user's hooks: shell commands, and the record the receipt keeps of them.
	"backup/hooks": {[]string{"backup/format"}, nil},
	// The set rules link no zip writer and no restore.
	"backup/backupset":           {[]string{"backup/format", "backup/atomicfile", "backup/eintr"}, []string{"golang.org/x/sys"}},
	"backup/backupset/s3store":   {[]string{"backup/backupset", "backup/format", "backup/atomicfile", "backup/eintr"}, []string{"github.com/aws/", "golang.org/x/sys"}},
	"backup/backupset/storetest": {[]string{"backup/backupset", "backup/format"}, nil},
	// The reporter implements the engine's hooks: it may know the engine's types.
	"backup/report": {[]string{"backup/format", "backup/engine", "backup/archive", "backup/walker", "backup/skiprules"},
		[]string{"golang.org/x/term"}},
}

// free are the packages not bound by importRules: main wires everything, and the test and
// bench helpers are tools, never imported by the product.
var free = []string{"backup", "backup/backupset/s3store/s3test", "backup/bench/"}

// TestImportRules checks every package of the module against importRules.
func TestImportRules(t *testing.T) {
	for path, imports := range modulePackages(t) {
		if slices.ContainsFunc(free, func(p string) bool { return path == p || strings.HasSuffix(p, "/") && strings.HasPrefix(path, p) }) {
			continue
		}
		rule, ok := importRules[path]
		if !ok {
			t.Errorf("%s has no import rule: add it to importRules in deps_test.go", path)
			continue
		}
		for _, imp := range imports {
			if !allowed(imp, rule.ours, rule.theirs) {
				t.Errorf("%s imports %s, which its rule does not allow", path, imp)
			}
		}
	}
}

func allowed(imp string, ours, theirs []string) bool {
	first, _, _ := strings.Cut(imp, "/")
	switch {
	case first == "backup":
		return slices.Contains(ours, imp)
	case !strings.Contains(first, "."):
		return true // the standard library
	}
	return slices.ContainsFunc(theirs, func(prefix string) bool { return strings.HasPrefix(imp, prefix) })
}

// modulePackages is every package of the module with the imports of its non-test files.
func modulePackages(t *testing.T) map[string][]string {
	t.Helper()
	pkgs := map[string][]string{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case !d.IsDir():
			return nil
		case path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata"):
			return filepath.SkipDir
		}
		p, err := build.ImportDir(path, 0)
		if _, ok := err.(*build.NoGoError); ok {
			return nil
		}
		if err != nil {
			return err
		}
		pkgs[filepath.ToSlash(filepath.Join("backup", path))] = p.Imports
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 10 {
		t.Fatalf("found %d packages; the walk is broken", len(pkgs))
	}
	return pkgs
}
