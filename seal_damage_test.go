package main

import (
	"archive/zip"
	"bytes"
	le "encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/age"
)

// age's payload: chunks of 64 KiB of plaintext, each followed by a 16-byte tag.
const (
	ageChunk    = 64 << 10
	ageChunkEnc = ageChunk + 16
)

// sealedLayout is an encrypted archive taken apart: its bytes, where its payload starts
// (after the header and nonce), the zip it holds, and the plaintext range of each file
// entry, local header to the end of its data.
type sealedLayout struct {
	file    []byte
	payload int
	zip     []byte
	ranges  map[string][2]int64
}

func layout(t *testing.T, path string, key ageKey) sealedLayout {
	t.Helper()
	file := must(os.ReadFile(path))
	hdr, err := age.ExtractHeader(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	ids, err := age.ParseIdentities(bytes.NewReader(must(os.ReadFile(key.identity))))
	if err != nil {
		t.Fatal(err)
	}
	r, err := age.Decrypt(bytes.NewReader(file), ids...)
	if err != nil {
		t.Fatal(err)
	}
	l := sealedLayout{file: file, payload: len(hdr) + 16, zip: must(io.ReadAll(r)), ranges: map[string][2]int64{}}
	zr, err := zip.NewReader(bytes.NewReader(l.zip), int64(len(l.zip)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File {
		data := must(f.DataOffset())
		// The local header ends where the data starts: find its signature before it.
		start := data - 30
		for ; start >= 0; start-- {
			if bytes.Equal(l.zip[start:start+4], []byte("PK\x03\x04")) &&
				start+30+int64(le.LittleEndian.Uint16(l.zip[start+26:]))+int64(le.LittleEndian.Uint16(l.zip[start+28:])) == data {
				break
			}
		}
		l.ranges[f.Name] = [2]int64{start, data + int64(f.CompressedSize64)}
	}
	return l
}

// chunks is how many payload chunks the archive has.
func (l sealedLayout) chunks() int { return (len(l.file) - l.payload + ageChunkEnc - 1) / ageChunkEnc }

// TestSealedDamage: a flipped byte in any chunk, a file cut short, a header swapped for
// another file's: verify and restore with the key exit 1, and restore writes nothing that
// came from a damaged chunk (each file it wrote is whole and right).
func TestSealedDamage(t *testing.T) {
	t.Parallel()
	key := newAgeKey(t)
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(7, 7))
	tree := map[string]node{}
	for i := range 6 {
		data := make([]byte, 40000)
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		tree[fmt.Sprintf("f%d.bin", i)] = node{content: string(data)}
	}
	makeTree(t, filepath.Join(dir, "app"), tree)
	os.Mkdir(filepath.Join(dir, "out"), 0o755)
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--level", "0", "--recipient", key.recipient, "-o", "out/", "app"), exitComplete)
	path := onlyFile(t, filepath.Join(dir, "out"), ".zip.age")
	l := layout(t, path, key)
	if l.chunks() < 4 {
		t.Fatalf("the archive has %d chunks; the test wants several", l.chunks())
	}
	check := func(t *testing.T, name string, damaged []byte, hit func(lo, hi int64) bool) {
		bad := filepath.Join(t.TempDir(), name+".zip.age")
		os.WriteFile(bad, damaged, 0o600)
		r := backup(t, runOpts{dir: dir}, "verify", "-i", key.identity, bad)
		if r.code != exitFailed || !strings.Contains(r.stderr, "damaged") && !strings.Contains(r.stderr, "decrypt") {
			t.Errorf("verify: exit %d, %q; want 1 saying it is damaged", r.code, r.stderr)
		}
		dest := filepath.Join(t.TempDir(), "dest")
		r = backup(t, runOpts{dir: dir}, "restore", "-i", key.identity, bad, dest)
		if r.code != exitFailed {
			t.Errorf("restore: exit %d, want 1; %s", r.code, r.stderr)
		}
		for name, n := range tree {
			got, err := os.ReadFile(filepath.Join(dest, "app", name))
			rg := l.ranges["app/"+name]
			switch {
			case err == nil && string(got) != n.content:
				t.Errorf("restore wrote %s with other content", name)
			case err == nil && hit(rg[0], rg[1]):
				t.Errorf("restore wrote %s, whose bytes lie in the damage", name)
			}
		}
	}
	for k := range l.chunks() {
		t.Run(fmt.Sprintf("chunk %d", k), func(t *testing.T) {
			damaged := bytes.Clone(l.file)
			damaged[l.payload+k*ageChunkEnc+min(100, (len(l.file)-l.payload)%ageChunkEnc/2)] ^= 0x20
			lo, hi := int64(k*ageChunk), int64((k+1)*ageChunk)
			check(t, "flipped", damaged, func(a, b int64) bool { return a < hi && b > lo })
		})
	}
	t.Run("cut short", func(t *testing.T) {
		check(t, "cut", l.file[:len(l.file)-10], func(int64, int64) bool { return true })
	})
	t.Run("swapped header", func(t *testing.T) {
		id, _ := age.ParseIdentities(bytes.NewReader(must(os.ReadFile(key.identity))))
		var buf bytes.Buffer
		w, _ := age.Encrypt(&buf, id[0].(*age.X25519Identity).Recipient())
		w.Write(l.zip)
		w.Close()
		hdr, _ := age.ExtractHeader(bytes.NewReader(buf.Bytes()))
		swapped := append(buf.Bytes()[:len(hdr)+16:len(hdr)+16], l.file[l.payload:]...)
		check(t, "swapped", swapped, func(int64, int64) bool { return true })
	})
}
