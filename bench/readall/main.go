// Command readall is the benchmark's read limit: it reads every regular file below DIR once,
// with one reader per CPU, and writes nothing. No archiver can be faster than this.
package main

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: readall DIR")
		os.Exit(2)
	}
	paths := make(chan string, 1024)
	var files, bytes atomic.Int64
	var wg sync.WaitGroup
	for range runtime.NumCPU() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 1<<20)
			for p := range paths {
				f, err := os.Open(p)
				if err != nil {
					continue
				}
				n, _ := io.CopyBuffer(io.Discard, onlyReader{f}, buf)
				f.Close()
				files.Add(1)
				bytes.Add(n)
			}
		}()
	}
	err := filepath.WalkDir(os.Args[1], func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			paths <- p
		}
		return nil
	})
	close(paths)
	wg.Wait()
	if err != nil {
		fmt.Fprintln(os.Stderr, "readall:", err)
		os.Exit(1)
	}
	fmt.Printf("%d files, %d bytes\n", files.Load(), bytes.Load())
}

// onlyReader hides the file's WriterTo, so that the bytes are really read into memory.
type onlyReader struct{ io.Reader }
