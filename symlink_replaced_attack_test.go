package main

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"backup/format"
)

// TestAttackSymlinkReplacedByFileSaysLost: with --symlinks store, a symlink the walk listed
// and then found replaced by a regular file when it read its target (`sed -i` on a link
// does that) was a warning "open: invalid argument", lost: exit 3, incomplete, for a link
// that is simply gone, as a file renamed over or deleted meanwhile is, neither of which
// makes a run incomplete.
// Correct: the link is gone, vanished (not lost; --fail-on vanished counts it): exit 0, and
// the warning says what happened.
func TestAttackSymlinkReplacedByFileSaysLost(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	src := filepath.Join(dir, "app")
	makeTree(t, src, map[string]node{"conf": {content: "a\n"}})
	link := filepath.Join(src, "link")
	if err := os.Symlink("conf", link); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.zip")

	// Held as it reads the link's target, after the walk listed it as a symlink.
	cmd, stderr := startIn(t, dir, "strace", "-f", "-qq", "-o", os.DevNull, "-P", src, "-e", "trace=readlinkat",
		"-e", "inject=readlinkat:delay_enter=3000000:when=1", binary, "create", "--symlinks", "store", "-o", out, "app")
	waitFor(t, "the run held at the link's readlink", inSyscall(cmd, unix.SYS_READLINKAT))
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(link, []byte("a file now\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	if code := cmd.ProcessState.ExitCode(); code != exitComplete {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitComplete, stderr)
	}
	rc := readReceipt(t, out+".receipt.json")
	if rc.Status != format.Complete || len(rc.Warnings) != 1 {
		t.Fatalf("status %s, warnings %+v; want complete and one warning", rc.Status, rc.Warnings)
	}
	if w := rc.Warnings[0]; w.Path != "app/link" || w.Op != format.OpVanished || w.Lost {
		t.Errorf("warning %+v, want app/link vanished, not lost", w)
	}
	unzipTest(t, out)
}
