// Command gencorpus lays out the generated part of the benchmark corpus: the same bytes on
// every machine, from fixed seeds.
//
//	gencorpus DIR                  a 40 MB log, CSV files, a 25 MB binary, 60 MB of random
//	                               data and 20,000 files of under 4 KiB
//	gencorpus -files N -size B DIR N files of B bytes each, 1,000 to a folder
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
)

func main() {
	files := flag.Int("files", 0, "make only `N` files of -size bytes")
	size := flag.Int("size", 100, "size of each file made by -files")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: gencorpus [-files N -size B] DIR")
		os.Exit(2)
	}
	dir := flag.Arg(0)
	var err error
	if *files > 0 {
		err = manyFiles(dir, *files, *size)
	} else {
		err = corpus(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gencorpus:", err)
		os.Exit(1)
	}
}

func corpus(dir string) error {
	steps := []struct {
		name string
		size int
		gen  func(w *bufio.Writer, r *rand.Rand, size int)
	}{
		{"logs/app.log", 40_000_000, genLog},
		{"data/orders.csv", 12_000_000, genCSV},
		{"data/metrics.csv", 10_000_000, genMetrics},
		{"data/users.csv", 6_000_000, genUsers},
		{"bin/app.bin", 25_000_000, genBinary},
		{"blobs/random.dat", 60_000_000, genRandom},
	}
	for i, s := range steps {
		r := rand.New(rand.NewPCG(uint64(i+1), 42))
		if err := writeFile(filepath.Join(dir, s.name), func(w *bufio.Writer) { s.gen(w, r, s.size) }); err != nil {
			return err
		}
	}
	return smallFiles(filepath.Join(dir, "small"), 20_000)
}

func writeFile(path string, gen func(w *bufio.Writer)) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	gen(w)
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// manyFiles makes n files of size bytes of text, 1,000 to a folder.
func manyFiles(dir string, n, size int) error {
	r := rand.New(rand.NewPCG(7, 42))
	buf := make([]byte, size)
	for i := range n {
		sub := filepath.Join(dir, fmt.Sprintf("d%04d", i/1000))
		if i%1000 == 0 {
			if err := os.MkdirAll(sub, 0o755); err != nil {
				return err
			}
		}
		fillText(buf, r)
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%07d.txt", i)), buf, 0o644); err != nil {
			return err
		}
	}
	return nil
}
