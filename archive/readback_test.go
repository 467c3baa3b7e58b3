package archive

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"backup/format"
)

// written archives refTree as a run does and returns the archive's path, the manifest it
// ends with (sorted, as report.Recorder sorts it) and what CloseManifest returned.
func writtenArchive(t testing.TB) (string, *format.Manifest, Summary) {
	t.Helper()
	var files []format.File
	out := t.TempDir()
	w, err := Create(t.Context(), out, "new.zip", Options{Method: format.Deflate, Level: DefaultLevel, OnFile: func(f format.File) { files = append(files, f) }})
	if err != nil {
		t.Fatal(err)
	}
	addTree(t, w, refTree(t))
	if err := w.Wait(); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(files, func(a, b format.File) int { return strings.Compare(a.Path, b.Path) })
	m := &format.Manifest{Status: "complete", Files: files}
	sum, err := w.CloseManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(out, "new.zip")
	if err := w.Commit(path, false); err != nil {
		t.Fatal(err)
	}
	return path, m, sum
}

func readBackProblems(t *testing.T, path string, m *format.Manifest, sum Summary) []string {
	t.Helper()
	res, err := ReadBack(t.Context(), path, m, sum, VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return problemStrings(res.Problems)
}

// TestReadBack: the read-back finds what Verify finds in the archive as written and as
// damaged on disk, without parsing the manifest again.
func TestReadBack(t *testing.T) {
	path, m, sum := writtenArchive(t)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"whole":                good,
		"a file's data":        flipByteIn(t, good, "a.txt"),
		"the manifest's bytes": flipByteIn(t, good, format.ManifestName),
	} {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := Verify(t.Context(), path, VerifyOptions{Expect: &sum.Summary})
			if err != nil {
				t.Fatal(err)
			}
			got, want := readBackProblems(t, path, m, sum), problemStrings(res.Problems)
			if !slices.Equal(got, want) {
				t.Errorf("ReadBack found %q, Verify %q", got, want)
			}
			if name != "whole" && len(got) == 0 {
				t.Error("no problem found")
			}
		})
	}
}

// TestReadBackManifest: the read-back compares the entries with the manifest in memory, and
// the manifest entry with the bytes written.
func TestReadBackManifest(t *testing.T) {
	path, m, sum := writtenArchive(t)
	other := sum
	other.ManifestSHA256[0] ^= 1
	if got := readBackProblems(t, path, m, other); !slices.Contains(got, format.ManifestName+": sha256 mismatch") {
		t.Errorf("another manifest's digest: problems %q, want the manifest's sha256 mismatch", got)
	}
	more := *m
	more.Files = append(slices.Clone(m.Files), format.File{Path: "zz", Size: 1, SHA256: format.Digest{1}})
	if got := readBackProblems(t, path, &more, sum); !slices.Contains(got, "zz: in the manifest but missing from the archive") {
		t.Errorf("a file more in memory: problems %q", got)
	}
	twice := *m
	twice.Files = append(slices.Clone(m.Files), m.Files[len(m.Files)-1])
	if got := readBackProblems(t, path, &twice, sum); len(got) == 0 || !strings.Contains(got[0], "listed twice") {
		t.Errorf("a file listed twice: problems %q", got)
	}
}

// TestReadBackCopied: an entry copied from the reference is not inflated again, but damage
// to it is still found, by the archive's SHA-256.
func TestReadBackCopied(t *testing.T) {
	path, m, sum := writtenArchive(t)
	for i := range m.Files {
		m.Files[i].Reused = true
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := readBackProblems(t, path, m, sum); len(got) != 0 {
		t.Errorf("whole: problems %q", got)
	}
	if err := os.WriteFile(path, flipByteIn(t, good, "a.txt"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := readBackProblems(t, path, m, sum); !slices.Equal(got, []string{"archive sha256 does not match the receipt"}) {
		t.Errorf("copied entry damaged: problems %q", got)
	}
}

// TestManifestDamageReported: a manifest whose bytes are damaged is reported as damaged,
// although it is parsed as it is read and the damage makes bad JSON before the CRC-32 is
// checked at its end.
func TestManifestDamageReported(t *testing.T) {
	body := `{"schema":"backup.manifest/v2","tool_version":"t","status":"complete","files":[],"skipped":[],"excluded":[],"warnings":[]}`
	data := buildZip(t, []zent{{name: format.ManifestName, body: body, store: true}}, false)
	if r := openZip(t, data); r.ManifestErr != nil {
		t.Fatalf("whole: %v", r.ManifestErr)
	}
	i := bytes.Index(data, []byte(body))
	data[i] = 'x'
	r := openZip(t, data)
	if r.ManifestErr == nil || r.ManifestErr.Error() != errCRC.Error() {
		t.Errorf("ManifestErr = %v, want %v", r.ManifestErr, errCRC)
	}
}

// TestReadBackManifestFirst: the read-back checks the manifest's entry first, from the
// record where the Writer says it wrote it, and once; where that record is not the
// manifest's, or not known, the walk of the central directory checks it. Either way it
// finds what Verify finds, in the archive as written and with the manifest damaged.
func TestReadBackManifestFirst(t *testing.T) {
	path, m, sum := writtenArchive(t)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ra := bytes.NewReader(good)
	rec, err := readCentralAt(ra, sum.manifestRecord.off)
	if !sum.manifestRecord.ok || err != nil || rec.Name != format.ManifestName {
		t.Fatalf("the Writer's record of the manifest %+v reads %v, %v", sum.manifestRecord, rec, err)
	}
	_, _, dirOff, _, err := directoryEnd(ra, int64(len(good)))
	if err != nil {
		t.Fatal(err)
	}
	at := sum.manifestRecord
	for name, data := range map[string][]byte{"whole": good, "damaged": flipByteIn(t, good, format.ManifestName)} {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		v, err := Verify(t.Context(), path, VerifyOptions{Expect: &sum.Summary})
		if err != nil {
			t.Fatal(err)
		}
		want := problemStrings(v.Problems)
		for where, at := range map[string]manifestAt{
			"where written":       at,
			"not known":           {},
			"the first record":    {off: dirOff, index: 0, ok: true},
			"not at a record":     {off: at.off + 1, index: at.index, ok: true},
			"at another index":    {off: at.off, index: 0, ok: true},
			"past the file's end": {off: int64(len(data)), index: at.index, ok: true},
		} {
			other := sum
			other.manifestRecord = at
			if got := readBackProblems(t, path, m, other); !slices.Equal(got, want) {
				t.Errorf("%s, the manifest's record %s: ReadBack found %q, Verify %q", name, where, got, want)
			}
		}
	}
}
