// Package s3test starts a real S3 server for tests: versitygw with its posix backend, on
// 127.0.0.1, in a temp folder, stopped when the test ends. The binary is found through
// $VERSITYGW or on PATH; without it the tests that need it skip, except under CI=true where
// they fail (.ci/run builds it).
package s3test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Credentials of the test server; never real ones.
const (
	AccessKey = "backuptestkey"
	SecretKey = "backuptest-secret-do-not-print"
)

// Server is a running S3 server.
type Server struct {
	// Endpoint is its URL, http://127.0.0.1:PORT.
	Endpoint string
	// Root is the folder whose subfolders are its buckets: a test can damage an object's
	// bytes there.
	Root string
	// Process is the server's, for a test that stops it (SIGSTOP) to play a server that
	// stalls.
	Process *os.Process
	// AccessLog is the server's access log (S3's server access log format, one request a
	// line): what the server itself says it was asked, read with ReadAccessLog.
	AccessLog string
	// CacheHome is the XDG_CACHE_HOME that Env gives backup: the local copies of the
	// archives of the sets in this server's buckets stay in the test's temp folder.
	CacheHome string
}

var buckets atomic.Int64

// Binary returns the versitygw binary, or skips t (fails it under CI=true) without one.
func Binary(t testing.TB) string {
	t.Helper()
	path := os.Getenv("VERSITYGW")
	if path == "" {
		path, _ = exec.LookPath("versitygw")
	}
	if path == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("versitygw is missing: .ci/run builds it (or set VERSITYGW)")
		}
		t.Skip("needs versitygw (set VERSITYGW, or put it on PATH)")
	}
	return path
}

// Start starts a server that lives until t ends.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Binary(t)
	root := t.TempDir()
	addr := freeAddr(t)
	logs := t.TempDir()
	access := filepath.Join(logs, "access.log")
	cmd := exec.Command(bin, "--port", addr, "--access", AccessKey, "--secret", SecretKey, "--access-log", access, "--quiet", "posix", root)
	logf, err := os.Create(filepath.Join(logs, "versitygw.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGCONT) // a stopped process dies of SIGKILL too, but say it
		cmd.Process.Kill()
		cmd.Wait()
		logf.Close()
	})
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(logf.Name())
			t.Fatalf("versitygw did not start listening on %s: %s", addr, log)
		}
	}
	return &Server{Endpoint: "http://" + addr, Root: root, Process: cmd.Process, AccessLog: access, CacheHome: t.TempDir()}
}

func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// Bucket makes a new, empty bucket and returns its name. The posix backend's buckets are
// its root's folders.
func (s *Server) Bucket(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("b%d-%s", buckets.Add(1), strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name())))
	if len(name) > 60 {
		name = name[:60]
	}
	name = strings.TrimRight(name, "-")
	if err := os.Mkdir(filepath.Join(s.Root, name), 0o755); err != nil {
		t.Fatal(err)
	}
	return name
}

// Env returns the environment that points the AWS SDK (and so backup) at the server.
func (s *Server) Env() []string {
	return []string{
		"AWS_ACCESS_KEY_ID=" + AccessKey,
		"AWS_SECRET_ACCESS_KEY=" + SecretKey,
		"AWS_REGION=us-east-1",
		"AWS_ENDPOINT_URL_S3=" + s.Endpoint,
		"AWS_CONFIG_FILE=/dev/null",
		"AWS_SHARED_CREDENTIALS_FILE=/dev/null",
		"XDG_CACHE_HOME=" + s.CacheHome,
	}
}

// SetEnv sets Env in the test's process.
func (s *Server) SetEnv(t testing.TB) {
	t.Helper()
	for _, kv := range s.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}
