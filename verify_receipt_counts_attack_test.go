package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackVerifyReceiptCountsEdited: a backup's receipt edited to count other files,
// bytes or folders than its archive holds (999 files where there are 2), its status and
// archive record left alone. Verify checked only the receipt's size, SHA-256 and status, and
// said "ok: 2 files … matches a.zip.receipt.json" (exit 0) of a receipt whose counts, which
// `status` shows and the metrics carry, the archive proves wrong. Correct: the receipt's
// counts of files, bytes and folders are what the archive's manifest and entries prove, as
// its status is; verify exits 1 and says which count the receipt gets wrong.
func TestAttackVerifyReceiptCountsEdited(t *testing.T) {
	t.Parallel()
	for _, field := range []string{"files", "bytes", "dirs"} {
		t.Run(field, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			makeTree(t, filepath.Join(dir, "src/app"), map[string]node{
				"a.txt":     {content: "hello\n"},
				"sub/b.txt": {content: "world\n"},
			})
			arch := filepath.Join(dir, "a.zip")
			mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
			editReceipt(t, arch+".receipt.json", func(rc map[string]any) { rc["counts"].(map[string]any)[field] = 999 })
			r := backup(t, runOpts{dir: dir}, "verify", arch)
			if r.code != exitFailed || !strings.Contains(r.stderr, "999") {
				t.Errorf("verify against a receipt that says %s 999: exit %d, %s; want 1, naming the count", field, r.code, r.stdout+r.stderr)
			}
		})
	}
}

// TestAttackAdoptReceiptCountsEdited: adopt takes an archive made elsewhere into a set with
// its receipt, which it checked only for the archive's size, SHA-256 and status: a receipt
// edited to count 999 files of 2 was adopted (exit 0), and `status` then showed 999 files
// and `status --metrics-file` wrote backup_files 999. Correct: adopt refuses it as verify
// does (exit 1), and copies nothing into the set.
func TestAttackAdoptReceiptCountsEdited(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"a.txt": {content: "hello\n"}, "b.txt": {content: "world\n"}})
	arch := filepath.Join(dir, "app-x.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	editReceipt(t, arch+".receipt.json", func(rc map[string]any) { rc["counts"].(map[string]any)["files"] = 999 })
	set := filepath.Join(dir, "set")
	r := backup(t, runOpts{dir: dir}, "adopt", set, arch)
	if r.code != exitFailed || !strings.Contains(r.stderr, "999") {
		t.Errorf("adopt of an archive whose receipt counts 999 files of 2: exit %d, %s; want 1, naming the count", r.code, r.stdout+r.stderr)
	}
	if names, _ := filepath.Glob(filepath.Join(set, "*.zip*")); len(names) != 0 {
		t.Errorf("adopt copied %v into the set; want nothing", names)
	}
}

// TestAttackActivateReceiptCountsEdited: activate read a backup of the set back against its
// receipt's size, SHA-256 and status only, so one whose receipt was edited to count 999
// files of 2 became LATEST (exit 0), and `status` then showed its 999 files. Correct:
// activate refuses it as verify and adopt do (exit 1, naming the count), LATEST unchanged.
func TestAttackActivateReceiptCountsEdited(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "hello\n"}, "b.txt": {content: "world\n"}})
	set := filepath.Join(dir, "set")
	for range 2 {
		mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app"), exitComplete)
	}
	archives := setArchives(t, set)
	older, latest := archives[0], readLatest(t, set)
	if older == latest {
		t.Fatalf("the set's runs %v: LATEST names the older", archives)
	}
	editReceipt(t, filepath.Join(set, older+".receipt.json"), func(rc map[string]any) { rc["counts"].(map[string]any)["files"] = 999 })
	r := backup(t, runOpts{dir: dir}, "activate", set, older)
	if r.code != exitFailed || !strings.Contains(r.stderr, "999") {
		t.Errorf("activate of a run whose receipt counts 999 files of 2: exit %d, %s; want 1, naming the count", r.code, r.stdout+r.stderr)
	}
	if got := readLatest(t, set); got != latest {
		t.Errorf("activate moved LATEST to %q; want it left on %q", got, latest)
	}
}
