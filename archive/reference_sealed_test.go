package archive

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"testing"

	"filippo.io/age"

	"backup/format"
)

// TestReferenceSealedSwapped: an encrypted reference is parsed through its decryption, and
// the hash that follows checks the file's own bytes where the parse read them, the age
// header included. A file that was another age file to the same key for the parse (an
// attacker who can write the set and knows the public key can make one) and the genuine one
// for the hash, whose SHA-256 the receipt records, is not trusted.
func TestReferenceSealedSwapped(t *testing.T) {
	zipData, err := os.ReadFile(refArchive(t, refTree(t)))
	if err != nil {
		t.Fatal(err)
	}
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	encrypt := func() []byte {
		var buf bytes.Buffer
		w, _ := age.Encrypt(&buf, id.Recipient())
		w.Write(zipData)
		w.Close()
		return buf.Bytes()
	}
	genuine, forged := encrypt(), encrypt()
	if len(genuine) != len(forged) || bytes.Equal(genuine, forged) {
		t.Fatal("the test wants two age files of one size and other bytes")
	}
	sum := sha256.Sum256(genuine)
	want := format.Summary{Size: int64(len(genuine)), SHA256: hex.EncodeToString(sum[:])}
	unseal := func(file io.ReaderAt, size int64) (io.ReaderAt, int64, error) {
		return age.DecryptReaderAt(file, size, id)
	}
	for _, tt := range []struct {
		name   string
		parsed []byte
		want   error
	}{{"genuine", genuine, nil}, {"swapped", forged, ErrNotAsRecorded}} {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recordingReader{ra: bytes.NewReader(tt.parsed)}
			zra, n, err := unseal(rec, want.Size)
			if err != nil {
				t.Fatal(err)
			}
			ref := &Reference{size: want.Size, zip: zra, zipSize: n, opts: ReuseOptions{Unseal: unseal}}
			if err := ref.read(zra, n, format.Compression{Method: format.Deflate, Level: DefaultLevel}); err != nil {
				t.Fatal(err)
			}
			if ref.Reusable() == 0 {
				t.Fatal("nothing to reuse: the test needs records")
			}
			if err := ref.prove(t.Context(), bytes.NewReader(genuine), want, rec, rec.reads, nil); err != tt.want {
				t.Errorf("prove = %v, want %v", err, tt.want)
			}
		})
	}
}
