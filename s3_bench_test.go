package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"

	"filippo.io/age"

	"backup/backupset/s3store/s3test"
)

// BenchmarkS3Create backs up a corpus ($BENCH_CORPUS, default the Go toolchain's source tree,
// as make bench's corpus starts) into a folder set and into a set on the local S3 server,
// interleaved in one run: the target is the bucket within 1.3 times the folder's time.
func BenchmarkS3Create(b *testing.B) {
	corpus := os.Getenv("BENCH_CORPUS")
	if corpus == "" {
		corpus = filepath.Join(runtime.GOROOT(), "src")
	}
	srv := s3test.Start(b)
	bucket := srv.Bucket(b)
	dir := b.TempDir()
	for _, target := range []string{"folder", "s3"} {
		b.Run(target, func(b *testing.B) {
			for i := range b.N {
				loc := filepath.Join(dir, fmt.Sprint("set", i))
				if target == "s3" {
					loc = fmt.Sprintf("s3://%s/set%d", bucket, i)
				}
				createInto(b, srv, corpus, loc)
			}
		})
	}
}

func createInto(b *testing.B, srv *s3test.Server, corpus, loc string) {
	b.Helper()
	cmd := exec.Command(binary, "create", "-q", "--output-dir", loc, corpus)
	cmd.Env = append(os.Environ(), srv.Env()...)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("create into %s: %v\n%s", loc, err, out)
	}
}

// BenchmarkS3RestoreInclude restores one small file (100 KiB) of a 1 GiB archive in a bucket
// with --include, through a proxy that counts the bytes the server sends: ranged reads should
// fetch under 1% of a plain archive, and under 2% of an encrypted one, which reads whole age
// chunks (the targets of issues 12 and 23).
func BenchmarkS3RestoreInclude(b *testing.B) {
	srv := s3test.Start(b)
	bucket := srv.Bucket(b)
	dir := b.TempDir()
	src := filepath.Join(dir, "app")
	os.MkdirAll(src, 0o755)
	const files, size = 64, 16 << 20
	for i := range files {
		f, err := os.Create(filepath.Join(src, fmt.Sprintf("f%02d.bin", i)))
		if err != nil {
			b.Fatal(err)
		}
		io.CopyN(f, randReader{}, size)
		f.Close()
	}
	if err := os.WriteFile(filepath.Join(src, "small.bin"), make([]byte, 100<<10), 0o644); err != nil {
		b.Fatal(err)
	}
	key := benchKey(b, dir)
	for _, kind := range []struct {
		name            string
		create, restore []string
	}{
		{"plain", nil, nil},
		{"encrypted", []string{"--recipient", key.recipient}, []string{"-i", key.identity}},
	} {
		b.Run(kind.name, func(b *testing.B) {
			loc := "s3://" + bucket + "/" + kind.name
			args := append(append([]string{"create", "-q", "--level", "0", "--output-dir", loc}, kind.create...), src)
			cmd := exec.Command(binary, args...)
			cmd.Env = append(os.Environ(), srv.Env()...)
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("create: %v\n%s", err, out)
			}
			restoreCounted(b, srv, loc, filepath.Join(dir, kind.name), kind.restore, files*size)
		})
	}
}

// restoreCounted restores app/small.bin from the set at loc b.N times through a proxy that
// counts what the server sends, and reports the bytes fetched, and their share of total.
func restoreCounted(b *testing.B, srv *s3test.Server, loc, dest string, extra []string, total int64) {
	var sent atomic.Int64
	proxy := countingProxy(b, srv.Endpoint, &sent)
	b.ResetTimer()
	for i := range b.N {
		sent.Store(0)
		args := append(append([]string{"restore", "--s3-endpoint", proxy, "--include", "app/small.bin"}, extra...), loc, fmt.Sprint(dest, i))
		cmd := exec.Command(binary, args...)
		cmd.Env = append(os.Environ(), srv.Env()...)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("restore: %v\n%s", err, out)
		}
	}
	b.ReportMetric(float64(sent.Load()), "fetched-bytes/op")
	b.ReportMetric(100*float64(sent.Load())/float64(total), "fetched-%/op")
}

// benchKey writes an age key pair into dir.
func benchKey(b *testing.B, dir string) ageKey {
	id, err := age.GenerateX25519Identity()
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, "key.txt")
	if err := os.WriteFile(path, []byte(id.String()+"\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	return ageKey{identity: path, recipient: id.Recipient().String()}
}

// countingProxy starts a proxy to the server at endpoint that adds the bytes of every
// response body to sent, and returns its URL; it stops when tb ends.
func countingProxy(tb testing.TB, endpoint string, sent *atomic.Int64) string {
	target, err := url.Parse(endpoint)
	if err != nil {
		tb.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ModifyResponse = func(resp *http.Response) error {
		resp.Body = countingBody{resp.Body, sent}
		return nil
	}
	proxy := httptest.NewServer(rp)
	tb.Cleanup(proxy.Close)
	return proxy.URL
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (c countingBody) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// randReader is incompressible bytes, fast (a xorshift generator).
type randReader struct{}

var randState atomic.Uint64

func (randReader) Read(p []byte) (int, error) {
	x := randState.Add(0x9e3779b97f4a7c15)
	for i := range p {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		p[i] = byte(x)
	}
	return len(p), nil
}
