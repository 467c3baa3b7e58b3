package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackDotDotAfterMissingIsUsage: a path whose ".." comes after a name that is not
// there (missing/../app) is a path the kernel cannot reach, as missing/app is; but create
// called it a usage error (exit 2, no receipt) where a SOURCE that does not exist is a failed
// run (exit 1, a failed receipt), and restore did the same with DEST where a DEST below a
// file fails (exit 1). The exit code said which spelling the user chose, not what happened.
func TestAttackDotDotAfterMissingIsUsage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "alpha\n"}})
	for _, source := range []string{"missing/app", "missing/../app"} {
		out := filepath.Join(dir, strings.ReplaceAll(source, "/", "_")+".zip")
		r := backup(t, runOpts{dir: dir}, "create", "-q", "-o", out, source)
		if r.code != exitFailed || strings.Contains(r.stderr, "for usage") {
			t.Errorf("create %s: exit %d %q; want %d, a failed run", source, r.code, r.stderr, exitFailed)
		}
		if _, err := os.Stat(out + ".receipt.json"); err != nil {
			t.Errorf("create %s: no receipt: %v", source, err)
		} else if rc := readReceipt(t, out+".receipt.json"); rc.Status != "failed" {
			t.Errorf("create %s: receipt says %s, want failed", source, rc.Status)
		}
	}
	archive := filepath.Join(dir, "ok.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", archive, "app"), exitComplete)
	for _, dest := range []string{"ok.zip/d", "ok.zip/../d2/../../d", "missing/../d"} {
		for _, flags := range [][]string{nil, {"--undo-dir", dir}} {
			r := backup(t, runOpts{dir: dir}, append(append([]string{"restore"}, flags...), archive, dest)...)
			if r.code != exitFailed || strings.Contains(r.stderr, "for usage") {
				t.Errorf("restore %q into %s: exit %d %q; want %d, a failed restore", flags, dest, r.code, r.stderr, exitFailed)
			}
		}
	}
}

// TestAttackSetDotDotAfterMissingIsUsage: the same for a set's DIR: status, sets and prune
// of nosuch fail (exit 1), of missing/../nosuch were usage errors (exit 2).
func TestAttackSetDotDotAfterMissingIsUsage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, args := range [][]string{{"status"}, {"sets"}, {"prune", "--keep-last", "1"}} {
		for _, set := range []string{"nosuch", "missing/../nosuch", "file/../nosuch"} {
			os.WriteFile(filepath.Join(dir, "file"), nil, 0o644)
			r := backup(t, runOpts{dir: dir}, append(args, set)...)
			if r.code != exitFailed || strings.Contains(r.stderr, "for usage") {
				t.Errorf("%s %s: exit %d %q; want %d", args[0], set, r.code, r.stderr, exitFailed)
			}
		}
	}
}

// TestAttackUnreachableSourceReceiptNamesAnother: the failed receipt of create
// missing/../app listed its source as "app", the path cleaned of what the kernel could not
// take: a folder that is there, and was never the one that failed (a SOURCE that does not
// exist is listed as its absolute path). A reader of the receipt (a cron wrapper, status)
// was told a source that is fine had failed.
func TestAttackUnreachableSourceReceiptNamesAnother(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "alpha\n"}})
	out := filepath.Join(dir, "u.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", out, "missing/../app"), exitFailed)
	rc := readReceipt(t, out+".receipt.json")
	if len(rc.Sources) != 1 || rc.Sources[0] != "missing/../app" {
		t.Errorf("receipt sources %q; want [missing/../app], the SOURCE that failed", rc.Sources)
	}
}

// TestAttackUnreachableSetReadsCleanedSet: status of missing/../set, beside a set named set,
// listed no runs (the folder the kernel cannot reach) but read LATEST at set/LATEST, the
// path joined and so cleaned: exit 0, --json "healthy": true, another set's health for a
// set that is not there. It fails as a missing set does.
func TestAttackUnreachableSetReadsCleanedSet(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"a.txt": {content: "alpha\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", filepath.Join(dir, "set"), "src/app"), exitComplete)
	for _, args := range [][]string{{"status"}, {"status", "--json"}} {
		r := backup(t, runOpts{dir: dir}, append(args, "missing/../set")...)
		if r.code != exitFailed || strings.Contains(r.stdout, `"healthy": true`) {
			t.Errorf("%q missing/../set: exit %d %q %q; want %d, no set there", args, r.code, r.stdout, r.stderr, exitFailed)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "missing")); err == nil {
		t.Errorf("status made the folder missing")
	}
}

// TestAttackAdoptUnreachableDirNamesNoPath: adopt into file/../set, which the kernel cannot
// reach, said `mkdir : no such file or directory`, naming no path: adopt took the DIR made
// absolute and dropped the error that it could not be.
func TestAttackAdoptUnreachableDirNamesNoPath(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"a.txt": {content: "alpha\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "a.zip", "src/app"), exitComplete)
	os.WriteFile(filepath.Join(dir, "file"), nil, 0o644)
	r := backup(t, runOpts{dir: dir}, "adopt", "file/../set", "a.zip")
	const want = "backup adopt: mkdir file: not a directory\n"
	if r.code != exitFailed || r.stderr != want {
		t.Errorf("adopt file/../set: exit %d %q; want %d %q", r.code, r.stderr, exitFailed, want)
	}
}
