package archive

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"backup/format"
)

// ownerTimeZip is one stored entry, a.txt, with a ux field (owner 65534:65534) and an
// extended timestamp, the same in its local header and its central record, as backup writes.
func ownerTimeZip(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	fh := &zip.FileHeader{Name: "a.txt", Method: zip.Store}
	setModified(fh, time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC))
	fh.Modified = time.Time{} // Go's writer would add a timestamp field of its own
	fh.Extra = addOwner(fh.Extra, &format.Meta{UID: 65534, GID: 65534})
	w, err := zw.CreateHeader(fh)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("alpha\n"))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestVerifyLocalOwnerAndTime edits the local header's owner and times only: each is damage
// to the entry, since unzip -X and bsdtar -p restore what the local header says.
func TestVerifyLocalOwnerAndTime(t *testing.T) {
	ux := []byte{0x75, 0x78, 11, 0, 1, 4}
	ut := []byte{0x55, 0x54, 5, 0, 1}
	for _, c := range []struct {
		name string
		edit func(local, extra []byte)
		want string // "" for none
	}{
		{"unchanged", func(local, extra []byte) {}, ""},
		{"owner", func(local, extra []byte) {
			i := bytes.Index(extra, ux)
			binary.LittleEndian.PutUint32(extra[i+6:], 0)
			binary.LittleEndian.PutUint32(extra[i+11:], 0)
		}, "local header gives owner 0:0, the central directory 65534:65534"},
		{"no owner", func(local, extra []byte) { extra[bytes.Index(extra, ux)] = 'X' },
			"local header gives owner none, the central directory 65534:65534"},
		{"older Unix field", func(local, extra []byte) {
			// ux turned into Info-ZIP's "Ux" field: uid 0, gid 0 that unzip reads.
			i := bytes.Index(extra, ux)
			extra[i], extra[i+1] = 0x55, 0x78
			clear(extra[i+4 : i+15])
		}, "local header gives owner 0:0, the central directory 65534:65534"},
		{"time", func(local, extra []byte) {
			i := bytes.Index(extra, ut)
			binary.LittleEndian.PutUint32(extra[i+5:], 0)
		}, "local header says modified 1970-01-01T00:00:00Z, the central directory 2026-11-29T03:00:00Z"},
		{"dos time", func(local, extra []byte) { local[10] ^= 1 },
			"local header says MS-DOS time 2026-11-29 03:00:02, the central directory 2026-11-29 03:00:00"},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := ownerTimeZip(t)
			at := localAt(t, data, "a.txt")
			n, x := int(binary.LittleEndian.Uint16(data[at+26:])), int(binary.LittleEndian.Uint16(data[at+28:]))
			c.edit(data[at:at+localLen], data[at+localLen+n:at+localLen+n+x])
			res, err := Verify(t.Context(), writeZip(t, data), VerifyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(problemStrings(res.Problems), "\n")
			if c.want == "" && got != "" || !strings.Contains(got, c.want) {
				t.Errorf("problems %q, want %q", got, c.want)
			}
		})
	}
}

// TestLocalMetaTwice: a local header that gives two owners, or two times, means one thing
// to a reader that takes the first and another to one that takes the last.
func TestLocalMetaTwice(t *testing.T) {
	owner := func(uid uint32) []byte {
		return addOwner(nil, &format.Meta{UID: uid, GID: uid})
	}
	mtime := func(s uint32) []byte {
		return binary.LittleEndian.AppendUint32([]byte{0x55, 0x54, 5, 0, 1}, s)
	}
	for _, c := range []struct {
		name  string
		extra []byte
		want  string
	}{
		{"same owner twice", append(owner(7), owner(7)...), ""},
		{"two owners", append(owner(7), owner(0)...), "two owners (7:7, 0:0)"},
		{"two times", append(mtime(1), mtime(2)...), "two modification times"},
	} {
		_, err := localMeta(0, 0, c.extra)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
