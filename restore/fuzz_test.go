package restore

import (
	"archive/zip"
	"bytes"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backup/archive"
	"backup/format"
)

// Seeds are in testdata/fuzz/<target>; go test ./restore -run TestFuzzSeeds -update-seeds
// writes the archives among them again from the builders below.
var updateSeeds = flag.Bool("update-seeds", false, "write the generated fuzz seed corpus to testdata/fuzz")

// FuzzReader opens arbitrary bytes as an archive, verifies it and restores it: nothing
// panics, a restore writes nothing outside its destination, and finds nothing damaged in
// an archive that verified.
func FuzzReader(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := archive.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		if len(r.Entries) > 100 {
			return
		}
		for _, f := range goZip(t, data).File {
			if f.UncompressedSize64 > 1<<16 {
				return // reading a zip bomb to its end only slows the fuzzer down
			}
		}
		res, err := r.Verify(t.Context(), archive.VerifyOptions{})
		if err != nil {
			t.Fatalf("archive.Verify of an opened archive: %v", err)
		}
		parent := t.TempDir()
		t.Cleanup(func() { makeDirsWritable(parent) })
		plan, err := NewPlan(t.Context(), r, filepath.Join(parent, "dest"), Options{Force: true})
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
		if res.OK() {
			restoredAsGo(t, data, filepath.Join(parent, "dest"))
		}
		if got, _ := os.ReadDir(parent); len(got) != 1 || got[0].Name() != "dest" {
			t.Fatalf("restore wrote beside its destination: %v", got)
		}
	})
}

// restoredAsGo fails t unless each regular file restored below dest holds what Go's zip
// reader reads in the entry of its name: an archive verify finds sound means the same to
// another tool. Whether Go's reader reads every entry is archive's FuzzVerifyMatchesGo; a
// name restore maps (a DOS name's backslashes) is not compared.
func restoredAsGo(t *testing.T, data []byte, dest string) {
	t.Helper()
	byName := map[string]*zip.File{}
	for _, zf := range goZip(t, data).File {
		byName[strings.TrimPrefix(zf.Name, "./")] = zf
	}
	filepath.WalkDir(dest, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(dest, path)
		zf, ok := byName[filepath.ToSlash(rel)]
		if !ok {
			return nil
		}
		rc, err := zf.Open()
		if err != nil {
			return nil
		}
		defer rc.Close()
		want, err := io.ReadAll(rc)
		if err != nil {
			return nil
		}
		if got, _ := os.ReadFile(path); !bytes.Equal(got, want) {
			t.Errorf("restored %q holds %q; Go's reader reads %q", rel, got, want)
		}
		return nil
	})
}

func namesProblem(ps []archive.Problem) bool {
	for _, p := range ps {
		if strings.HasPrefix(p.Reason, "unsafe name") || p.Reason == "duplicate name" {
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
