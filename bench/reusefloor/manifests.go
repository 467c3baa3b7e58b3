package main

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"github.com/klauspost/compress/flate"

	"backup/format"
)

// manifestLevel is the deflate level backup writes a manifest at (archive/manifest_deflate.go).
const manifestLevel = 2

// readManifest reads the manifest of the archive f as a reusing run reads its reference's:
// Go's reader of the central directory, the manifest inflated by the decoder backup uses and
// parsed by backup's own parser.
func readManifest(f *os.File) (*format.Manifest, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	z, err := zip.NewReader(f, st.Size())
	if err != nil {
		return nil, err
	}
	z.RegisterDecompressor(zip.Deflate, flate.NewReader)
	for _, e := range z.File {
		if e.Name != format.ManifestName {
			continue
		}
		rc, err := e.Open()
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		return format.ReadManifest(rc, format.Within{Entries: len(z.File)})
	}
	return nil, errors.New("no manifest")
}

// writeManifest encodes m as a run writes its new manifest and deflates it at manifestLevel,
// on one goroutine (the run's pool shares it out: the same CPU).
func writeManifest(m *format.Manifest) ([]byte, error) {
	var b bytes.Buffer
	fw, err := flate.NewWriter(&b, manifestLevel)
	if err != nil {
		return nil, err
	}
	if _, err := m.WriteTo(fw); err != nil {
		return nil, err
	}
	if err := fw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// checkManifest inflates a manifest writeManifest deflated and takes its CRC-32, as the
// read-back checks the new archive's manifest.
func checkManifest(deflated []byte) (uint32, error) {
	h := crc32.NewIEEE()
	fr := flate.NewReader(bytes.NewReader(deflated))
	defer fr.Close()
	if _, err := io.Copy(h, fr); err != nil {
		return 0, fmt.Errorf("read back the manifest: %w", err)
	}
	return h.Sum32(), nil
}

// later runs f on a goroutine of its own, beside what the caller does next; the func it
// returns waits for f's answer.
func later[T any](f func() (T, error)) func() (T, error) {
	type answer struct {
		v   T
		err error
	}
	done := make(chan answer, 1)
	go func() {
		v, err := f()
		done <- answer{v, err}
	}()
	return func() (T, error) {
		a := <-done
		return a.v, a.err
	}
}
