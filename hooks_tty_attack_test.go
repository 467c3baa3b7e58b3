package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// openPty opens a pseudo-terminal: the master the test reads, the slave a process gets as
// its controlling terminal.
func openPty(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { master.Close() })
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { slave.Close() })
	return master, slave
}

// TestAttackHookTouchingTerminalStalls runs create on a terminal, as a person does, with a
// hook that sets the terminal's modes (what sudo or ssh do to ask for a password). The hook
// ran in a process group of its own on backup's terminal, a background group there, so the
// kernel stopped it (SIGTTOU) and the run waited for the hook's whole timeout, then said
// "timed out". Correct: a hook has no terminal (its stdin is already /dev/null; it runs in
// a session of its own), so what asks the terminal fails at once, with its own message.
func TestAttackHookTouchingTerminalStalls(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src"), map[string]node{"f.txt": {content: "hi\n"}})
	master, slave := openPty(t)
	cmd := exec.Command(binary, "create", "-q", "-o", "a.zip", "--exec-timeout", "20s",
		"--exec-after", "stty -echo </dev/tty; echo hook-ran-on >&2; tty >&2", "src")
	cmd.Dir = dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	out, _ := io.ReadAll(master) // EIO once backup and the hook closed the terminal
	err := cmd.Wait()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(out), "\r\n", "\n")
	if code := cmd.ProcessState.ExitCode(); code != exitComplete || strings.Contains(text, "timed out") ||
		!strings.Contains(text, "hook-ran-on\nnot a tty") {
		t.Errorf("exit %d, terminal:\n%s\nwant exit 0, the hook run at once without a terminal (tty: not a tty)", code, text)
	}
}
