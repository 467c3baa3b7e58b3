package archive

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// centralAt is the offset of the central record of name in data.
func centralAt(t *testing.T, data []byte, name string) int {
	t.Helper()
	for i := 0; ; {
		j := bytes.Index(data[i:], []byte("PK\x01\x02"))
		if j < 0 {
			t.Fatalf("no central record of %q", name)
		}
		at := i + j
		n := int(binary.LittleEndian.Uint16(data[at+28:]))
		if at+46+n <= len(data) && string(data[at+46:at+46+n]) == name {
			return at
		}
		i = at + 4
	}
}

// openReusable opens the edited reference data, which must open, and checks that it gives
// want files to reuse; before says what the code before the attack's fix did.
func openReusable(t *testing.T, data []byte, level, want int, before string) *Reference {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ref.zip")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	ref, err := openRef(t, path, level)
	if err != nil {
		t.Fatalf("OpenReference = %v; %s", err, before)
	}
	t.Cleanup(func() { ref.Close() })
	if got := ref.Reusable(); got != want {
		t.Errorf("Reusable() = %d, want %d", got, want)
	}
	return ref
}

// TestAttackBesideDroppedEntryPastEnd: a file the manifest gives no SHA-256 (here its
// central record's size is not the manifest's) is not reused, and the serial code never
// looked at its entry. Its local header's offset lies past the end of the file. The pass
// now keys every entry before keep drops the ones without a SHA-256, reaches for it, and
// fails the whole reference with ErrNotAsRecorded ("its SHA-256 is not the one its
// receipt records") although the file's SHA-256 is its receipt's: the other files,
// reusable before 5a51986, are now read again.
func TestAttackBesideDroppedEntryPastEnd(t *testing.T) {
	path := refArchive(t, refTree(t))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c := centralAt(t, data, "a.txt")
	binary.LittleEndian.PutUint32(data[c+24:], binary.LittleEndian.Uint32(data[c+24:])+1) // size: not the manifest's
	binary.LittleEndian.PutUint32(data[c+42:], 0x7ffffff0)                                // local header: past the end
	openReusable(t, data, DefaultLevel, 3, "before 5a51986 it opened with 3 files to reuse")
}

// TestAttackBesideOtherLevelDamagedEntry: a reference made at another level gives no file
// to reuse, and the serial code did not key any entry; one entry whose local header points
// past the end now makes the run say the reference's SHA-256 is not its receipt's.
func TestAttackBesideOtherLevelDamagedEntry(t *testing.T) {
	path := refArchive(t, refTree(t))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c := centralAt(t, data, "sub/b.txt")
	binary.LittleEndian.PutUint32(data[c+42:], 0x7ffffff0)
	openReusable(t, data, 1, 0, "at another level; before 5a51986 it opened, with nothing to reuse")
}

// TestAttackBesideDroppedEntryOverlapsKept: the entry of a file the manifest gives no
// SHA-256 (its sizes, central and local alike, are not the manifest's) runs 10 bytes into
// the next entry, of a file that is reused. The serial code never keyed the dropped entry,
// so the next one was copied. The pass now keys it first, moves past the start of the next,
// and marks that one damaged (errOverlap): the run reads it from the file instead and
// says the reference entry is damaged.
func TestAttackBesideDroppedEntryOverlapsKept(t *testing.T) {
	dir := refTree(t)
	path := refArchive(t, dir)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c := centralAt(t, data, "a.txt")
	local := int(binary.LittleEndian.Uint32(data[c+42:]))
	next := int(binary.LittleEndian.Uint32(data[centralAt(t, data, "empty")+42:]))
	if local != 0 || next <= local {
		t.Fatalf("a.txt at %d, empty at %d: the test needs a.txt first", local, next)
	}
	for _, h := range []int{c + 20, local + 18} { // compressed size, then size, in both headers
		binary.LittleEndian.PutUint32(data[h:], binary.LittleEndian.Uint32(data[h:])+10)
		binary.LittleEndian.PutUint32(data[h+4:], binary.LittleEndian.Uint32(data[h+4:])+1)
	}
	ref := openReusable(t, data, DefaultLevel, 3, "")
	e, ok := lookupFile(t, ref, dir, "empty")
	if !ok {
		t.Fatal("empty is not unchanged")
	}
	if e.damage != nil {
		t.Errorf("empty's entry: %v; before 5a51986 it was copied (the entry it overlaps was never keyed)", e.damage)
	}
}
