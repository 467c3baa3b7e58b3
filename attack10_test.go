package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// attack10Cap is security.capability for cap_net_raw=ep (VFS_CAP_REVISION_2), as
// `setcap cap_net_raw+ep` writes it.
var attack10Cap = []byte{1, 0, 0, 2, 0, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}

// attack10Held runs the binary with args (in dir) under strace, which delays the exit of
// every inject syscall (strace's -e inject=...) on the paths traced; when a line of strace's
// log satisfies held (the process is then held in that call), it calls during, and waits for
// the run to end.
func attack10Held(t *testing.T, dir, inject string, traced []string, held func(string) bool, during func(), args ...string) result {
	t.Helper()
	mustTool(t, "strace")
	log := filepath.Join(t.TempDir(), "strace.log")
	sargs := []string{"-f", "-y", "-o", log, "-e", "inject=" + inject}
	for _, p := range traced {
		sargs = append(sargs, "-P", p)
	}
	cmd := exec.Command("strace", append(append(sargs, binary), args...)...)
	cmd.Dir = dir
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForLine(t, log, held)
	during()
	err := cmd.Wait()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return result{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
}

// attack10As runs sh -c script in dir as the user nobody (the unprivileged attacker).
func attack10As(t *testing.T, dir, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("as nobody: %s: %v\n%s", script, err, out)
	}
}

// TestAttack10CapabilityKeptForBytesWrittenAfterWalk: app/tool is nobody's own script, to
// which the administrator gave a file capability (cap_net_raw=ep, as `setcap` on a user's
// tool). Any write to the file makes the kernel drop security.capability (file_remove_privs):
// a capability is granted to those bytes only. backup create --xattrs reads the attributes
// in the walk (by path), and the data later, through the file it opens; nobody rewrites his
// file in between:
//   - "between the walk and the open": strace holds the openat of app/tool;
//   - "during the read": strace holds the first read of app/tool. The new change-time check
//     sees the write and reads the file again, but the re-read keeps the attributes the walk
//     read from the file as it was, and says nothing.
//
// Either way the entry holds nobody's new bytes together with the capability the kernel took
// away from them, in a run that says complete with no warning, and `restore --xattrs
// --same-permissions` (as root) makes a cap_net_raw program of nobody's new bytes: a
// privilege nobody never had. The walk even records the change time (ctime_ns) it saw, which
// moved, but nothing compares it to the fstat of the file opened.
//
// Expected: an entry never pairs bytes with attributes the file did not have together with
// them: attributes read again from the opened descriptor (fgetxattr) after reading, or the
// file found changed since the walk listed it (its change time moved: a changed warning) and
// stored without the attributes read from the file as listed, as for a replaced file.
func TestAttack10CapabilityKeptForBytesWrittenAfterWalk(t *testing.T) {
	mustRoot(t)
	for _, c := range []struct {
		name    string
		inject  string
		traced  func(app string) []string
		heldAt  string
		options []string
	}{
		{"between the walk and the open", "openat:delay_exit=1500000",
			func(app string) []string { return []string{app} }, `app>, "tool"`, nil},
		{"during the read", "read:delay_exit=1500000:when=1",
			func(app string) []string { return []string{filepath.Join(app, "tool")} }, `read(`, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := sharedTempDir(t)
			app := filepath.Join(dir, "app")
			tool := filepath.Join(app, "tool")
			makeTree(t, dir, map[string]node{"app/tool": {content: "#!/bin/sh\necho good\n", mode: 0o755}})
			if err := os.Chown(tool, nobody, nobody); err != nil {
				t.Fatal(err)
			}
			if err := unix.Setxattr(tool, "security.capability", attack10Cap, 0); err != nil {
				t.Skipf("cannot set a file capability here: %v", err)
			}
			r := attack10Held(t, dir, c.inject, c.traced(app), func(l string) bool {
				return strings.Contains(l, c.heldAt) && strings.Contains(l, "tool")
			}, func() {
				attack10As(t, app, `printf '#!/bin/sh\necho EVIL\n' > tool`)
				if _, err := unix.Getxattr(tool, "security.capability", make([]byte, 64)); !errors.Is(err, unix.ENODATA) {
					t.Skipf("this kernel kept the capability across a write (%v)", err)
				}
			}, append([]string{"create", "--xattrs", "-o", "b.zip", "app"}, c.options...)...)
			if r.code != exitComplete && r.code != exitIncomplete {
				t.Fatalf("create: exit %d\n%s", r.code, r.stderr)
			}
			archive := filepath.Join(dir, "b.zip")
			data := readZipGo(t, archive)["app/tool"]
			_, meta := storedAs(t, archive, "app/tool")
			if meta == nil {
				t.Fatal("no manifest entry for app/tool")
			}
			if strings.Contains(data, "EVIL") && meta.Xattrs["security.capability"] != nil {
				t.Errorf("app/tool stored with nobody's new bytes %q and the security.capability the kernel dropped when he wrote them (exit %d, %s)",
					data, r.code, strings.TrimSpace(r.stderr))
			}
			// What restore makes of it.
			out := filepath.Join(dir, "out")
			if rr := backup(t, runOpts{dir: dir}, "restore", "--xattrs", "--same-permissions", "b.zip", out); rr.code != exitComplete {
				t.Fatalf("restore: exit %d\n%s", rr.code, rr.stderr)
			}
			restored := filepath.Join(out, "app", "tool")
			got, err := os.ReadFile(restored)
			if err != nil {
				t.Fatal(err)
			}
			if v, err := unix.Getxattr(restored, "security.capability", make([]byte, 64)); err == nil && v > 0 && bytes.Contains(got, []byte("EVIL")) {
				t.Errorf("restore --xattrs --same-permissions made a cap_net_raw program of nobody's bytes %q", got)
			}
		})
	}
}
