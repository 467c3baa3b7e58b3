// Command createfloor is the benchmark's floor for a full run: the least that backup create
// must do to write a trusted archive of a tree at the default level, done on every core with
// nothing else.
//
//	createfloor TREE OUT
//
// One worker per CPU takes the regular files below TREE (a walk that stats every path, as
// backup's does), reads each once, compresses it in chunks of 1 MiB with the deflate encoder
// and level backup uses, and takes the CRC-32 and SHA-256 of its data; the compressed chunks
// go into OUT in the order they are done, with OUT's own SHA-256 taken as they go (the
// receipt's), and OUT is then made durable and renamed into place.
//
// It leaves out what depends on how the archive records files: zip headers, the manifest,
// the receipt, the order of entries, and a file's SHA-256 taken in one pass (here each chunk
// is hashed on its own, which lets a large file's chunks share the cores). So it is a lower
// bound: a full run can come close to it, never under it.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/klauspost/compress/flate"

	"backup/atomicfile"
)

const (
	chunkSize = 1 << 20
	level     = 6 // backup create's default
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: createfloor TREE OUT")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "createfloor:", err)
		os.Exit(1)
	}
}

// chunk is a part of one file to compress: its bytes from off, up to chunkSize of them.
type chunk struct {
	path string
	off  int64
}

func run(tree, out string) error {
	tmp := out + ".tmp"
	dst, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	defer dst.Close()
	w := &output{f: dst, sum: sha256.New()}
	chunks := make(chan chunk, 64)
	errs := make(chan error, runtime.NumCPU()+1)
	var wg sync.WaitGroup
	for range runtime.NumCPU() {
		wg.Go(func() {
			c := newCompressor()
			defer w.fold(c)
			for ch := range chunks {
				if err := c.compress(ch, w); err != nil {
					errs <- fmt.Errorf("%s: %w", ch.path, err)
					for range chunks { // let the walk finish
					}
					return
				}
			}
		})
	}
	files, bytes, err := walk(tree, chunks)
	close(chunks)
	wg.Wait()
	errs <- err
	close(errs)
	for e := range errs {
		if e != nil {
			return e
		}
	}
	if err := dst.Sync(); err != nil {
		return err
	}
	if err := os.Rename(tmp, out); err != nil {
		return err
	}
	if err := atomicfile.SyncDir(filepath.Dir(out)); err != nil {
		return err
	}
	fmt.Printf("%d files, %d bytes, %d compressed, digests %016x, output %x\n", files, bytes, w.size, w.check, w.sum.Sum(nil)[:8])
	return nil
}

// walk stats every path below tree and sends each regular file's chunks.
func walk(tree string, chunks chan<- chunk) (files, total int64, err error) {
	err = filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil || !info.Mode().IsRegular() {
			return err
		}
		files++
		total += info.Size()
		for off := int64(0); off == 0 || off < info.Size(); off += chunkSize {
			chunks <- chunk{p, off}
		}
		return nil
	})
	return files, total, err
}

// compressor is one worker's encoder and buffers, reused for every chunk.
type compressor struct {
	in    []byte
	out   bytes.Buffer
	fw    *flate.Writer
	check uint64 // the digests folded together, printed so that none can be left out
}

func newCompressor() *compressor {
	fw, err := flate.NewWriter(nil, level)
	if err != nil {
		panic(err)
	}
	return &compressor{in: make([]byte, chunkSize), fw: fw}
}

// compress reads ch, takes its CRC-32 and SHA-256, deflates it and writes it to w.
func (c *compressor) compress(ch chunk, w *output) error {
	f, err := os.Open(ch.path)
	if err != nil {
		return err
	}
	n, err := f.ReadAt(c.in, ch.off)
	f.Close()
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	data := c.in[:n]
	c.check ^= uint64(crc32.ChecksumIEEE(data))
	sum := sha256.Sum256(data)
	c.check ^= binary.LittleEndian.Uint64(sum[:])
	c.out.Reset()
	c.fw.Reset(&c.out)
	if _, err := c.fw.Write(data); err != nil {
		return err
	}
	if err := c.fw.Close(); err != nil {
		return err
	}
	return w.write(c.out.Bytes())
}

// output is the file the compressed chunks go into, one at a time.
type output struct {
	mu    sync.Mutex
	f     *os.File
	sum   hash.Hash
	size  int64
	check uint64
}

func (o *output) fold(c *compressor) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.check ^= c.check
}

func (o *output) write(b []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	n, err := o.f.Write(b)
	o.sum.Write(b[:n])
	o.size += int64(n)
	return err
}
