package format

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
)

// The manifest's codec at the bench corpus's size (31,484 files) and at a million files,
// against what it replaced: encoding/json's decoder, and json.MarshalIndent per record.

var benchManifestSizes = []int{31484, 1_000_000}

func BenchmarkManifestParse(b *testing.B) {
	for _, n := range benchManifestSizes {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			var buf bytes.Buffer
			if _, err := benchManifest(n).WriteTo(&buf); err != nil {
				b.Fatal(err)
			}
			benchParse(b, buf.Bytes(), "codec", ParseManifest)
			benchParse(b, buf.Bytes(), "encoding-json", func(r io.Reader) (*Manifest, error) {
				return parseManifestJSON(r, MaxManifestSize)
			})
		})
	}
}

func benchParse(b *testing.B, data []byte, name string, parse func(io.Reader) (*Manifest, error)) {
	b.Run(name, func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for range b.N {
			if _, err := parse(bytes.NewReader(data)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkManifestWrite(b *testing.B) {
	for _, n := range benchManifestSizes {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			m := benchManifest(n)
			var got, want bytes.Buffer
			m.WriteTo(&got)
			writeManifestJSON(m, &want)
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				b.Fatal("WriteTo and writeManifestJSON differ")
			}
			benchWrite(b, m, "codec", (*Manifest).WriteTo)
			benchWrite(b, m, "encoding-json", writeManifestJSON)
		})
	}
}

func benchWrite(b *testing.B, m *Manifest, name string, write func(*Manifest, io.Writer) (int64, error)) {
	b.Run(name, func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			var count countWriter
			if _, err := write(m, &count); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(count))
		}
	})
}

// benchManifest is a manifest of n files with the fields a backup of the bench corpus
// records for each.
func benchManifest(n int) *Manifest {
	rng := rand.New(rand.NewPCG(1, 2))
	m := &Manifest{ToolVersion: "bench", Status: "complete", Files: make([]File, n),
		Skipped: []Skipped{}, Excluded: []Excluded{}, Warnings: []Warning{}}
	for i := range m.Files {
		f := &m.Files[i]
		f.Path = fmt.Sprintf("corpus/go-src/src/pkg%d/sub%d/file_%d_test.go", i/500, i/50, i)
		f.Size = rng.Int64N(1 << 20)
		f.RawSHA256 = new(Digest)
		for j := range f.SHA256 {
			f.SHA256[j], f.RawSHA256[j] = byte(rng.Uint32()), byte(rng.Uint32())
		}
		ns := rng.Int64N(1e9)
		f.Meta = &Meta{MtimeNsec: int(ns), CtimeNsec: 1796122276e9 + ns, Ino: 10020156 + uint64(i), Dev: 65024,
			User: "root", Group: "root"}
	}
	return m
}

// writeManifestJSON is Manifest.WriteTo as it was before the codec: json.Marshal for each
// record. The benchmark's manifest has no dirs.
func writeManifestJSON(m *Manifest, w io.Writer) (int64, error) {
	head := *m
	head.Schema = ManifestSchema
	head.Files = nil
	b, err := json.Marshal(&head)
	if err != nil {
		return 0, err
	}
	before, after, _ := bytes.Cut(b, []byte(`"files":null`))
	cw := new(countWriter)
	bw := bufio.NewWriterSize(io.MultiWriter(w, cw), 64<<10)
	bw.Write(before)
	err = writeList(bw, "files", m.Files, func(b []byte, f *File) ([]byte, error) {
		r, err := json.Marshal(f.record())
		return append(b, r...), err
	})
	if err != nil {
		return int64(*cw), err
	}
	bw.Write(after)
	err = bw.Flush()
	return int64(*cw), err
}
