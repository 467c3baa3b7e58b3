package archive

import (
	"archive/zip"
	"bytes"
	"strings"
	"testing"
)

// TestAttackAppendedArchiveReadTwoWays: a zip (app/evil) appended to another of the same
// layout (app/good). The end record at the end is the appended one's; its directory offset,
// taken from the start of the file as Go's reader tries first, finds the first archive's
// directory, so Go (and backup) read app/good, while unzip, Python and libarchive add the
// bytes before it and read app/evil. verify said "ok" and restore wrote app/good: an
// archive other tools read otherwise is damage, as a zip64 end record that disagrees is.
func TestAttackAppendedArchiveReadTwoWays(t *testing.T) {
	zipOf := func(name, data string) []byte {
		var b bytes.Buffer
		zw := zip.NewWriter(&b)
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(data))
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	mustReadAsDamaged(t, append(zipOf("app/good", "good"), zipOf("app/evil", "EVIL")...), "other tools")
}

// mustReadAsDamaged checks that an archive of app/good with one of app/evil appended, which
// others (who) read as app/evil, is damage to backup's reader, not read as app/good.
func mustReadAsDamaged(t *testing.T, data []byte, who string) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(data), int64(len(data)))
	if err == nil {
		var names []string
		for _, e := range r.Entries {
			names = append(names, e.Name)
		}
		t.Fatalf("read as %q, though %s read app/evil", names, who)
	}
	if !strings.Contains(err.Error(), "damaged") {
		t.Errorf("error %q does not say the archive is damaged", err)
	}
}
