package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestAttackUndoRevertsFileTheRestoreLeft: restore --force DEST, and while it runs the user
// saves a new version of app/c (an editor's rename). The restore sees it, and says so:
// `app/c: was changed or replaced in the destination during the restore; what is there now
// is left as it is (not restored)`, exit 3. Then the user runs the undo the restore printed:
// it put the before-state's app/c (the version from before the restore) over the user's new
// one, and said complete (exit 0), though the restore it undoes never touched app/c. The
// user's edit is only in the undo's own before-state. The before-state holds what was there
// before the restore, not what the restore changed: a file that holds neither that nor what
// the restore wrote was changed by someone else since, and the undo must leave it, with a
// warning, as it leaves a created file edited since.
// The before-state now records what the restore writes over each file it replaces (its
// manifest's "replaced": path, size, SHA-256), and the undo leaves a file that holds
// neither that nor the saved one.
func TestAttackUndoRevertsFileTheRestoreLeft(t *testing.T) {

	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"a": {content: "archived a\n"}, "c": {content: "archived c\n"}})
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	makeTree(t, filepath.Join(dest, "app"), map[string]node{"a": {content: "old a\n"}, "c": {content: "old c\n"}})

	// Held at its first rename into DEST/app (app/a's, in archive order, one job), the
	// restore has its plan and its before-state; the user saves app/c then.
	log := filepath.Join(dir, "strace.log")
	cmd := exec.Command("strace", "-f", "-qq", "-o", log, "-P", filepath.Join(dest, "app"), "-e", "trace=renameat,renameat2",
		"-e", "inject=renameat,renameat2:delay_enter=1000000:when=1", binary, "restore", "--jobs", "1", "--force", "--undo-dir", dir, arch, dest)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForCall(t, log, func(c string) bool { return strings.Contains(c, "renameat") && !returned(c) })
	writeFile(t, filepath.Join(dest, "app/.c.swp"), "the user's new c\n")
	if err := os.Rename(filepath.Join(dest, "app/.c.swp"), filepath.Join(dest, "app/c")); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitIncomplete || !strings.Contains(stderr.String(), "app/c: was changed or replaced") {
		t.Fatalf("restore: exit %d, want %d with app/c left as it is\n%s", code, exitIncomplete, stderr.String())
	}
	assertContent(t, filepath.Join(dest, "app/a"), "archived a\n")
	assertContent(t, filepath.Join(dest, "app/c"), "the user's new c\n")

	undo := regexp.MustCompile(`\(undo: backup (.*) (\S+) (\S+)\)`).FindStringSubmatch(stderr.String())
	if undo == nil {
		t.Fatalf("no undo command printed:\n%s", stderr.String())
	}
	r := backup(t, runOpts{dir: dir}, append(strings.Fields(undo[1]), undo[2], undo[3])...)
	assertContent(t, filepath.Join(dest, "app/a"), "old a\n")
	if got := string(readFile(t, filepath.Join(dest, "app/c"))); got != "the user's new c\n" {
		t.Errorf("the undo (exit %d) put %q in app/c, which the restore it undoes left as the user's %q\n%s", r.code, got, "the user's new c\n", r.stderr)
	}
	if r.code != exitComplete || !strings.Contains(r.stderr, "app/c: not put back: ") {
		t.Errorf("undo: exit %d, want %d and a warning that app/c stays\n%s", r.code, exitComplete, r.stderr)
	}
}

// TestAttackManifestTinyReplacedRecords: the before-state's list of the files its restore
// wrote ("replaced", added with the fix above) rewritten to five million `{}` records (15 MB
// of JSON in a 15 KB archive) was decoded whole, as any other field, before the first was
// found to have no path: the bomb the lists of created paths and notes were made safe from.
// Each record is checked as it is read, as created's are.
func TestAttackManifestTinyReplacedRecords(t *testing.T) {
	t.Parallel()
	tiny := func(m map[string]any) { m["replaced"] = make([]struct{}, 5_000_000) }
	refusesManifestBomb(t, tiny, "a replaced file has no path", "verify", "restore", "list")
}
