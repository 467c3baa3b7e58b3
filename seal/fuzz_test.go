package seal

import (
	"bytes"
	"io"
	"testing"

	"filippo.io/age"
)

// FuzzUnseal feeds Unseal and ReadAt bytes from a bucket an attacker may write: whatever
// they are, they give an error or authenticated plaintext, never a panic or a hang.
func FuzzUnseal(f *testing.F) {
	id, err := age.ParseX25519Identity("AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX")
	if err != nil {
		f.Fatal(err)
	}
	var buf bytes.Buffer
	w, _ := age.Encrypt(&buf, id.Recipient())
	w.Write(bytes.Repeat([]byte("seed"), 20000))
	w.Close()
	f.Add(buf.Bytes())
	f.Add([]byte(magic + "-> X25519 abc\n--- def\n"))
	f.Add([]byte("PK\x03\x04"))
	ids := identities(id)
	f.Fuzz(func(t *testing.T, data []byte) {
		ReadHeader(bytes.NewReader(data), int64(len(data)))
		ra, n, err := ids.Unseal(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		got, err := io.ReadAll(io.NewSectionReader(ra, 0, n))
		if err == nil && int64(len(got)) != n {
			t.Fatalf("read %d plaintext bytes, size %d", len(got), n)
		}
	})
}
