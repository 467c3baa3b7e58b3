package archive

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"backup/format"
	"backup/skiprules"
)

// Seeds are in testdata/fuzz/<target>; go test ./archive -run TestFuzzSeeds -update-seeds
// writes the archives among them again from the builders below.
var updateSeeds = flag.Bool("update-seeds", false, "write the generated fuzz seed corpus to testdata/fuzz")

// FuzzCheckName checks that every name CheckName accepts stays below any folder it is
// joined to, on Unix and, for a host other than Unix, read as a Windows path too; and that
// what it accepts for any host it accepts for Unix.
func FuzzCheckName(f *testing.F) {
	f.Fuzz(func(t *testing.T, name string, host uint8) {
		h := Host(host)
		if CheckName(name, h) != nil {
			return
		}
		const dest = "/dest"
		joined := filepath.Join(dest, name)
		switch {
		case !strings.HasPrefix(joined, dest+"/"):
			t.Fatalf("%q joins to %q, outside %s", name, joined, dest)
		case !filepath.IsLocal(name):
			t.Fatalf("%q accepted but not local", name)
		case path.Clean(name) != name:
			t.Fatalf("%q accepted but not clean: %q", name, path.Clean(name))
		case strings.IndexByte(name, 0) >= 0:
			t.Fatalf("%q accepted with a NUL", name)
		case CheckName(name, HostUnix) != nil:
			t.Fatalf("%q accepted for host %d but not for Unix", name, host)
		case h.unixLike():
		case strings.IndexByte(name, '\\') >= 0:
			t.Fatalf("%q accepted from host %d with a backslash", name, host)
		case len(name) >= 2 && name[1] == ':' && isLetter(name[0]):
			t.Fatalf("%q accepted from host %d with a drive letter", name, host)
		}
	})
}

// FuzzCheckNames checks the names of an archive together. Input: one entry a line; a
// trailing "/" makes a directory, a leading "@" a symlink. When CheckNames finds nothing,
// the names are safe and unique, and none lies below an entry that is not a directory.
func FuzzCheckNames(f *testing.F) {
	f.Fuzz(func(t *testing.T, list string) {
		var entries []*Entry
		for line := range strings.SplitSeq(list, "\n") {
			e := &Entry{Name: strings.TrimSuffix(line, "/"), IsDir: strings.HasSuffix(line, "/")}
			if n, ok := strings.CutPrefix(e.Name, "@"); ok && !e.IsDir {
				e.Name, e.Kind = n, skiprules.KindSymlink
			}
			entries = append(entries, e)
		}
		if len(CheckNames(entries)) > 0 {
			return
		}
		byName := map[string]*Entry{}
		for _, e := range entries {
			if CheckName(e.Name, e.Host) != nil || byName[e.Name] != nil {
				t.Fatalf("%q passed, unsafe or duplicate", e.Name)
			}
			byName[e.Name] = e
		}
		for _, e := range entries {
			for dir := parentOf(e.Name); dir != ""; dir = parentOf(dir) {
				if p := byName[dir]; p != nil && !p.IsDir {
					t.Fatalf("%q passed below %q, which is not a directory", e.Name, dir)
				}
			}
		}
	})
}

// FuzzReader opens arbitrary bytes as an archive, verifies it and restores it: nothing
// panics, a restore writes nothing outside its destination, and finds nothing damaged in
// an archive that verified.
func FuzzReader(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		if len(r.Entries) > 100 {
			return
		}
		for _, f := range r.zr.File {
			if f.UncompressedSize64 > 1<<16 {
				return // reading a zip bomb to its end only slows the fuzzer down
			}
		}
		res, err := r.Verify(t.Context(), VerifyOptions{})
		if err != nil {
			t.Fatalf("Verify of an opened archive: %v", err)
		}
		parent := t.TempDir()
		t.Cleanup(func() { makeDirsWritable(parent) })
		plan, err := r.PlanRestore(filepath.Join(parent, "dest"), RestoreOptions{Force: true})
		if err != nil || !plan.OK() {
			return
		}
		if !res.OK() && len(plan.Refused) == 0 && namesProblem(res.Problems) {
			t.Fatalf("verify found unsafe names %q, the plan did not", problemStrings(res.Problems))
		}
		rr, err := plan.Run(t.Context())
		if err != nil {
			return
		}
		if res.OK() && len(rr.Damaged) > 0 {
			t.Fatalf("verify found nothing, restore found %q", problemStrings(rr.Damaged))
		}
		if got, _ := os.ReadDir(parent); len(got) != 1 || got[0].Name() != "dest" {
			t.Fatalf("restore wrote beside its destination: %v", got)
		}
	})
}

func namesProblem(ps []Problem) bool {
	for _, p := range ps {
		if strings.HasPrefix(p.Reason, "unsafe name") || p.Reason == errDuplicateName.Error() {
			return true
		}
	}
	return false
}

// TestFuzzSeeds writes the generated seeds with -update-seeds; without it, it checks that
// they are there, so that a fuzz run never starts from nothing.
func TestFuzzSeeds(t *testing.T) {
	seeds := map[string][]byte{
		"backup":         buildZip(t, sampleTree, true),
		"foreign":        buildZip(t, sampleTree, false),
		"flipped":        flipByteIn(t, buildZip(t, sampleTree, true), "app/sub/b.bin"),
		"crc-zero":       crcZero(t),
		"method-12":      rawEntry(t, "x", 12, 0),
		"dotdot":         buildZip(t, []zent{{name: "a/../../x", body: "x"}}, false),
		"symlink-then-x": buildZip(t, []zent{{name: "l", body: "/", symlink: true}, {name: "l/x", body: "x"}}, false),
		"duplicate":      buildZip(t, []zent{{name: "a", body: "1"}, {name: "a", body: "2"}}, true),
		"appended":       arrange(t, buildZip(t, sampleTree, true), []zent{{name: "app/zz", body: "x"}}, []string{"app/a.txt", format.ManifestName, "app/zz"}),
		"two-manifests":  arrange(t, buildZip(t, sampleTree, true), nil, []string{format.ManifestName, "app/a.txt", format.ManifestName}),
		"unix-backslash": buildZip(t, []zent{{name: `a\b`, body: "x"}, {name: "c:d", body: "y"}, {name: "\xff", body: "z"}}, true),
	}
	for name, data := range seeds {
		file := filepath.Join("testdata", "fuzz", "FuzzReader", name)
		if *updateSeeds {
			content := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", data)
			if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		} else if _, err := os.Stat(file); err != nil {
			t.Errorf("seed missing (run with -update-seeds): %v", err)
		}
	}
}

// makeDirsWritable lets t.TempDir's cleanup remove folders restored read-only.
func makeDirsWritable(root string) {
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(path, 0o700)
		}
		return nil
	})
}
