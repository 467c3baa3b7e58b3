package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"
)

// TestOutputDevice: a device node at an output's path is refused (exit 2) and left as it is.
// Once, --receipt /dev/null, run as root, replaced /dev/null with a regular file.
func TestOutputDevice(t *testing.T) {
	mustRoot(t)
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "hello"}})
	null := filepath.Join(dir, "null")
	if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"create", "-o", "a.zip", "--receipt", "null", "app"},
		{"create", "-o", "a.zip", "--metrics-file", "null", "app"},
		{"create", "--force", "-o", "null", "app"},
		{"status", "--metrics-file", "null", "set"},
	} {
		r := backup(t, runOpts{dir: dir}, args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, " is a character device, not a regular file") {
			t.Errorf("%v: exit %d, %q; want 2 and the device named", args, r.code, r.stderr)
		}
		if info, err := os.Lstat(null); err != nil || info.Mode()&os.ModeCharDevice == 0 {
			t.Fatalf("%v: null is now %v, %v", args, info.Mode(), err)
		}
	}
}

// pathFlags are the flags that name a path, by command and flag: true for the outputs,
// which must pass pathcheck.Check, false for the inputs. A new path-valued flag fails
// TestOutputFlagsChecked until it is added here, and, as an output, until a script shows
// it refused over an input or another output.
var pathFlags = map[string]bool{
	"create --output":       true,
	"create --output-dir":   true, // a backup set's folder: sealed against the other outputs
	"create --receipt":      true,
	"create --metrics-file": true,
	"status --metrics-file": true,
	"sets --metrics-file":   true,
	"create --cache-dir":    true, // a folder written while the sources are read
	"prune --attic":         true,
	"restore --undo-dir":    true,
	"create --exclude-from": false,
	// The keys' files are only read (and, for create, checked as inputs: no output may
	// replace them).
	"create --recipients-file": false,
	"create --identity":        false,
	"verify --identity":        false,
	"list --identity":          false,
	"restore --identity":       false,
	"activate --identity":      false,
	"adopt --identity":         false,
	"create --reference":       false,
	"verify --receipt":         false,
	"adopt --receipt":          false,
}

// TestOutputFlagsChecked is a statement of policy, as Go's deps_test is: every flag whose
// placeholder names a path is classified in pathFlags, and every output flag has a usage
// error (exits 2) in testdata/script/outputs*.txtar.
func TestOutputFlagsChecked(t *testing.T) {
	scripts, err := filepath.Glob("testdata/script/outputs*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	var refused []string
	for _, s := range scripts {
		data, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(string(data)) {
			if rest, ok := strings.CutPrefix(line, "exits 2 backup "); ok {
				refused = append(refused, rest)
			}
		}
	}
	for _, cmd := range newRootCmd().Commands() {
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			placeholder, _ := pflag.UnquoteUsage(f)
			if !slices.Contains([]string{"PATH", "DIR", "FILE", "ARCHIVE"}, placeholder) {
				return
			}
			name := cmd.Name() + " --" + f.Name
			output, ok := pathFlags[name]
			switch {
			case !ok:
				t.Errorf("%s names a path (%s): classify it in pathFlags, and if the command writes there, put it through pathcheck.Check", name, placeholder)
			case output && !slices.ContainsFunc(refused, func(l string) bool {
				return strings.HasPrefix(l, cmd.Name()+" ") && (strings.Contains(l, " --"+f.Name+" ") || f.Shorthand != "" && strings.Contains(l, " -"+f.Shorthand+" "))
			}):
				t.Errorf("output flag %s has no usage error in testdata/script/outputs*.txtar", name)
			}
		})
	}
}

// TestPathFlagsRefuseEmpty: every path-valued flag refuses the empty string, as
// docs/create.md (Outputs never overwrite inputs) promises, with exit 2 and one line naming it. restore --undo-dir "" was taken for "not
// given", and the before-state went to DEST's parent, the folder the script meant not to use.
func TestPathFlagsRefuseEmpty(t *testing.T) { // not parallel: t.Chdir
	rest := map[string][]string{ // what each command needs besides the flag
		"create":   {"src"},
		"status":   {"set"},
		"prune":    {"--keep-last", "1", "set"},
		"restore":  {"--force", "a.zip", "dest"},
		"verify":   {"a.zip"},
		"list":     {"a.zip"},
		"adopt":    {"set", "a.zip"},
		"activate": {"set", "a.zip"},
	}
	for name := range pathFlags {
		cmd, flag, _ := strings.Cut(name, " ")
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{cmd, flag, ""}, rest[cmd]...)
			var stdout, stderr strings.Builder
			t.Chdir(dir)
			code := run(args, &stdout, &stderr)
			if want := flag + " is empty"; code != exitUsage || !strings.Contains(stderr.String(), want) {
				t.Errorf("%q: exit %d, stderr %q; want 2 and %q", args, code, stderr.String(), want)
			}
			if got := listDir(t, dir); len(got) > 0 {
				t.Errorf("%q wrote %q", args, got)
			}
		})
	}
}

// TestOutputSymlinkToDevice: an output's path that is a symlink to a device, a FIFO or a
// socket, or one through /proc (/dev/stdout, /dev/stderr, /proc/self/fd/N), names that
// file, not a place for a new one: the rename that puts the output in place replaced the
// link. Run as root, --metrics-file /dev/stdout replaced the system's /dev/stdout with a
// regular file, and so it did with a link to /dev/null here. Such a path is refused (exit
// 2) and left as it is; a symlink to a regular file, or a dangling one, is still replaced.
func TestOutputSymlinkToDevice(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "hello"}})
	links := map[string]string{"nul": "/dev/null", "out": "/proc/self/fd/1", "err": "/dev/stderr"}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	stdout, err := os.Create(filepath.Join(dir, "stdout.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer stdout.Close()
	for _, args := range [][]string{
		{"create", "-o", "a.zip", "--receipt", "nul", "app"},
		{"create", "-o", "a.zip", "--metrics-file", "out", "app"},
		{"create", "-o", "a.zip", "--metrics-file", "err", "app"},
		{"create", "--force", "-o", "nul", "app"},
		{"status", "--metrics-file", "out", "set"},
	} {
		cmd := exec.Command(binary, args...)
		cmd.Dir = dir
		cmd.Stdout = stdout // a regular file: /proc/self/fd/1 resolves to it
		var stderr strings.Builder
		cmd.Stderr = &stderr
		cmd.Run()
		if code := cmd.ProcessState.ExitCode(); code != exitUsage || !strings.Contains(stderr.String(), " is a symlink to ") {
			t.Errorf("%v: exit %d, %q; want 2 and the link named", args, code, stderr.String())
		}
		for name, target := range links {
			if got, err := os.Readlink(filepath.Join(dir, name)); err != nil || got != target {
				t.Fatalf("%v: %s is no longer the link to %s: %q, %v", args, name, target, got, err)
			}
		}
	}
}
