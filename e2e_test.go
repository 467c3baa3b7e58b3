package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"backup/format"

	"github.com/rogpeppe/go-internal/testscript"
)

// The end-to-end tests run the built binary, as cron and CI wrappers do; the scripts in
// testdata/script run run() as the command "backup" (testscript.Main makes the test binary
// that command).

var binary string

func TestMain(m *testing.M) {
	testscript.Main(buildFirst{m}, map[string]func(){
		"backup": func() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) },
	})
}

// buildFirst builds the binary before the tests run; the runs of the test binary as the
// command "backup" do not need it.
type buildFirst struct{ m *testing.M }

func (b buildFirst) Run() int {
	dir, err := os.MkdirTemp("", "backup-bin-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	// Readable and executable by anyone: permission tests run the binary as nobody.
	if err := os.Chmod(dir, 0o755); err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "backup")
	if err := buildBinary(binary); err != nil {
		panic("building backup: " + err.Error())
	}
	if raceEnabled {
		// The race runtime sleeps a second at exit by default, so that goroutines still
		// running may report races: a second of nothing for each of the hundreds of runs of
		// the binary, and half the time of these tests. The runs inherit this.
		os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	}
	return b.m.Run()
}

// buildBinary builds the command at path, with the race detector when the tests run under it
// (building the standard library with it costs minutes on a cold cache, for nothing otherwise).
func buildBinary(path string) error {
	args := []string{"build", "-o", path}
	if raceEnabled {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, ".")...)
	build.Stderr = os.Stderr
	return build.Run()
}

// result is what one run of the binary did.
type result struct {
	code           int
	stdout, stderr string
}

// runOpts says how to run the binary: the folder it runs in and, for permission tests, the
// user it runs as.
type runOpts struct {
	dir   string
	uid   int // 0: as the test's own user
	stdin io.Reader
	env   []string // added to the test's environment
}

func backup(t *testing.T, opts runOpts, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = opts.dir
	cmd.Stdin = opts.stdin
	if opts.env != nil {
		cmd.Env = append(os.Environ(), opts.env...)
	}
	if opts.uid != 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(opts.uid), Gid: uint32(opts.uid)}}
	}
	return runCmd(t, cmd)
}

// runCmd runs cmd (the binary, or a tool that runs it) and returns what it did; a command
// that could not be run fails the test.
func runCmd(t *testing.T, cmd *exec.Cmd) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running %v: %v", cmd.Args, err)
	}
	return result{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
}

// mustRoot skips a test that needs root (device nodes, dropping privileges), except in CI,
// which runs as root: there a skip would hide a test that never ran.
func mustRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatal("this test needs root, and CI runs as root")
	}
	t.Skip("needs root")
}

// mustTool skips a test that needs a tool, except in CI, which installs it (.ci/run): there
// a skip would hide a test that never ran.
func mustTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err == nil {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("this test needs %s, and CI installs it", name)
	}
	t.Skip("needs " + name)
}

// nobody is the uid permission tests run the binary as: root reads everything.
const nobody = 65534

// sharedTempDir is a t.TempDir that nobody can enter and write to.
func sharedTempDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o777|os.ModeSticky); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// node is one path of a test tree.
type node struct {
	kind    string // "file" (default), "dir", "symlink", "fifo", "socket", "device"
	content string // file content, or symlink target
	mode    os.FileMode
}

// mountTmpfs mounts a tmpfs of size bytes (as mount's size= option takes them) on the folder
// dir (CI runs as root), and detaches it at cleanup: lazily, since a process the test
// started may still hold a file there, and a busy mount left behind would fail TempDir's
// removal.
func mountTmpfs(t *testing.T, dir, size string) {
	t.Helper()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Fatalf("mounting a tmpfs (CI runs as root): %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
}

// makeTree lays out nodes under root, parents first; modes are applied last, deepest first,
// so that an unreadable directory can still be filled.
func makeTree(t *testing.T, root string, nodes map[string]node) {
	t.Helper()
	names := make([]string, 0, len(nodes))
	for name := range nodes {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		makeNode(t, filepath.Join(root, filepath.FromSlash(name)), nodes[name])
	}
	slices.Reverse(names)
	for _, name := range names {
		if n := nodes[name]; n.mode != 0 {
			if err := os.Chmod(filepath.Join(root, filepath.FromSlash(name)), n.mode); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Cleanup(func() { makeWritable(root) })
}

func makeNode(t *testing.T, path string, n node) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	var err error
	switch n.kind {
	case "", "file":
		err = os.WriteFile(path, []byte(n.content), 0o644)
	case "dir":
		err = os.MkdirAll(path, 0o755)
	case "symlink":
		err = os.Symlink(n.content, path)
	case "fifo":
		err = syscall.Mkfifo(path, 0o644)
	case "device":
		err = syscall.Mknod(path, syscall.S_IFCHR|0o644, 1<<8|3) // like /dev/null
	case "socket":
		err = makeSocket(t, path)
	default:
		t.Fatalf("unknown node kind %q", n.kind)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// makeSocket binds a unix socket at path and keeps it listening for the test's life, as a
// running service's control socket would be. It binds through /proc/self/fd/N/NAME, N the
// open parent folder, since socket paths are limited to about 100 bytes; a chdir would do
// too, but would move every test running in parallel.
func makeSocket(t *testing.T, path string) error {
	t.Helper()
	dir, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer dir.Close()
	l, err := net.Listen("unix", fmt.Sprintf("/proc/self/fd/%d/%s", dir.Fd(), filepath.Base(path)))
	if err != nil {
		return err
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	t.Cleanup(func() { l.Close() })
	return nil
}

// listDir lists the names in dir, so that a test can check that a refused run created
// nothing.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func makeWritable(root string) {
	filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
		if err == nil && info.IsDir() {
			os.Chmod(path, 0o755)
		}
		return nil
	})
}

func readReceipt(t *testing.T, path string) *format.Receipt {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rc format.Receipt
	if err := json.Unmarshal(data, &rc); err != nil {
		t.Fatalf("receipt %s: %v", path, err)
	}
	return &rc
}

// readZip reads every entry of the archive with Go's reader, and checks it with unzip -t.
func readZip(t *testing.T, path string) map[string]string {
	t.Helper()
	if out, err := exec.Command("unzip", "-tqq", path).CombinedOutput(); err != nil {
		t.Fatalf("unzip -t %s: %v\n%s", path, err, out)
	}
	return readZipGo(t, path)
}

// unzipTest checks the archive with Info-ZIP unzip -t.
func unzipTest(t *testing.T, path string) {
	t.Helper()
	mustTool(t, "unzip")
	if out, err := exec.Command("unzip", "-tqq", path).CombinedOutput(); err != nil {
		t.Errorf("unzip -t %s: %v\n%s", path, err, out)
	}
}

// dataOffset is where the middle of the stored data of the entry name is in the archive.
func dataOffset(t *testing.T, path, name string) int64 {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		if f.Name == name {
			off, err := f.DataOffset()
			if err != nil {
				t.Fatal(err)
			}
			return off + int64(f.CompressedSize64/2)
		}
	}
	t.Fatalf("%s holds no %s", path, name)
	return 0
}

// readZipGo reads every entry of the archive with Go's reader.
func readZipGo(t *testing.T, path string) map[string]string {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	entries := map[string]string{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		entries[f.Name] = string(data)
	}
	return entries
}

// runMeasured runs the binary with args in dir and returns its exit code, what it wrote (on
// stdout and stderr, as they came) and its peak RSS. The RSS is measured by a python3 that starts it: Linux keeps a process's peak RSS
// across exec, and a child of this test process starts in its memory (vfork), so its own
// figure would be the test's, hundreds of MB.
func runMeasured(t *testing.T, dir string, args ...string) (code int, output string, rss int64) {
	t.Helper()
	const measure = `import resource, subprocess, sys
p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
sys.stderr.buffer.write(p.stdout)
print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)`
	cmd := exec.Command("python3", append([]string{"-c", measure, binary}, args...)...)
	cmd.Dir = dir
	var errBuf bytes.Buffer
	cmd.Stderr = &errBuf
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3 running %s: %v\n%.300s", args[0], err, errBuf.String())
	}
	var kib int64
	if _, err := fmt.Sscan(string(out), &code, &kib); err != nil {
		t.Fatalf("python3 running %s printed %q: %v", args[0], out, err)
	}
	return code, errBuf.String(), kib << 10
}

// startIn starts name (the binary, or strace in front of it) with args in dir, in a process
// group of its own that the test's end kills, and returns it with what it writes on stderr.
func startIn(t *testing.T, dir, name string, args ...string) (*exec.Cmd, *strings.Builder) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &strings.Builder{}, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killGroup(cmd) })
	return cmd, &stderr
}
