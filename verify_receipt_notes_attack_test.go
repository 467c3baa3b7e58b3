package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// notedBackup is an incomplete backup, made as nobody, of a tree with a FIFO (skipped), a
// .tmp file (excluded) and a file nobody may read (a warning, its data lost): its archive's
// path, the receipt beside it.
func notedBackup(t *testing.T) (dir, arch string) {
	t.Helper()
	mustRoot(t) // the unreadable file, as nobody
	dir = sharedTempDir(t)
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{
		"a.txt":    {content: "hello\n"},
		"fifo":     {kind: "fifo"},
		"junk.tmp": {content: "junk\n"},
		"secret":   {content: "nobody's\n", mode: 0o600},
	})
	makeTree(t, filepath.Join(dir, "out"), map[string]node{".": {kind: "dir", mode: 0o777}})
	arch = filepath.Join(dir, "out", "app-x.zip")
	mustExit(t, backup(t, runOpts{dir: dir, uid: nobody}, "create", "-q", "-x", "*.tmp", "-o", arch, "src/app"), exitIncomplete)
	return dir, arch
}

// receiptNoteEdits are edits of a receipt's counts and lists of what was skipped, excluded
// and warned about, none of which touches its archive record, files, bytes or folders.
var receiptNoteEdits = map[string]func(rc map[string]any){
	"skipped 0":  func(rc map[string]any) { rc["counts"].(map[string]any)["skipped"] = 0 },
	"excluded 0": func(rc map[string]any) { rc["counts"].(map[string]any)["excluded"] = 0 },
	"warnings 0": func(rc map[string]any) { rc["counts"].(map[string]any)["warnings"] = 0 },
	"lost 0":     func(rc map[string]any) { rc["counts"].(map[string]any)["lost"] = 0 },
	"no warnings listed": func(rc map[string]any) {
		rc["warnings"] = []any{}
	},
	"warning not lost": func(rc map[string]any) {
		rc["warnings"].([]any)[0].(map[string]any)["lost"] = false
	},
	"skipped path": func(rc map[string]any) {
		rc["skipped"].([]any)[0].(map[string]any)["path"] = "app/other"
	},
	"excluded rule": func(rc map[string]any) {
		rc["excluded"].([]any)[0].(map[string]any)["rule"] = "cachedir"
	},
	"all of them": func(rc map[string]any) {
		c := rc["counts"].(map[string]any)
		c["skipped"], c["excluded"], c["warnings"], c["lost"] = 0, 0, 0, 0
		rc["skipped"], rc["excluded"], rc["warnings"] = []any{}, []any{}, []any{}
	},
}

// TestAttackVerifyReceiptNotesEdited: a receipt's counts of skipped, excluded, warned and
// lost paths, and its lists of them, which `status` shows and the metrics carry
// (backup_skipped_paths, backup_warnings, backup_lost_paths), edited to hide the data an
// incomplete backup lost (0 lost, no warning listed). Verify held only the files, bytes and
// folders to the archive and said "ok … matches app-x.zip.receipt.json" (exit 0). Correct:
// they are those of the manifest, which the archive's SHA-256 covers; verify exits 1 and
// says what the receipt gets wrong.
func TestAttackVerifyReceiptNotesEdited(t *testing.T) {
	t.Parallel()
	dir, arch := notedBackup(t)
	mustExit(t, backup(t, runOpts{dir: dir}, "verify", "-q", arch), exitComplete)
	for name, edit := range receiptNoteEdits {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sub := t.TempDir()
			for _, name := range []string{"app-x.zip", "app-x.zip.receipt.json"} {
				if err := os.WriteFile(filepath.Join(sub, name), readFile(t, filepath.Join(filepath.Dir(arch), name)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			editReceipt(t, filepath.Join(sub, "app-x.zip.receipt.json"), edit)
			r := backup(t, runOpts{dir: sub}, "verify", "app-x.zip")
			if r.code != exitFailed || !strings.Contains(r.stderr, "the receipt was edited?") {
				t.Errorf("verify against a receipt edited (%s): exit %d, %s; want 1, saying the receipt disagrees", name, r.code, r.stdout+r.stderr)
			}
		})
	}
}

// TestAttackAdoptReceiptNotesEdited: adopt copied the receipt of an incomplete backup,
// edited to say 0 lost and no warnings, into the set (exit 0), and `status --metrics-file`
// then wrote backup_lost_paths 0. Correct: adopt refuses it as verify does, nothing copied.
func TestAttackAdoptReceiptNotesEdited(t *testing.T) {
	t.Parallel()
	dir, arch := notedBackup(t)
	editReceipt(t, arch+".receipt.json", receiptNoteEdits["all of them"])
	set := filepath.Join(dir, "set")
	r := backup(t, runOpts{dir: dir}, "adopt", set, arch)
	if r.code != exitFailed || !strings.Contains(r.stderr, "the receipt was edited?") {
		t.Errorf("adopt of an archive whose receipt hides its warnings: exit %d, %s; want 1, saying the receipt disagrees", r.code, r.stdout+r.stderr)
	}
	if names, _ := filepath.Glob(filepath.Join(set, "*.zip*")); len(names) != 0 {
		t.Errorf("adopt copied %v into the set; want nothing", names)
	}
}

// TestSealedReceiptNotesCountedNotListed: the receipt of an encrypted archive lists no path
// (see docs/encryption.md), so none of the skipped, excluded or warned paths its manifest
// lists: verify -i holds its counts of them to the manifest, and not its lists, which it
// leaves out on purpose. One whose count was edited is refused all the same.
func TestSealedReceiptNotesCountedNotListed(t *testing.T) {
	t.Parallel()
	key := newAgeKey(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{
		"a.txt":    {content: "hello\n"},
		"fifo":     {kind: "fifo"},
		"junk.tmp": {content: "junk\n"},
	})
	arch := filepath.Join(dir, "app-x.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-x", "*.tmp", "--recipient", key.recipient, "-o", arch, "src/app"), exitComplete)
	mustExit(t, backup(t, runOpts{dir: dir}, "verify", "-q", "-i", key.identity, arch), exitComplete)
	editReceipt(t, arch+".receipt.json", receiptNoteEdits["skipped 0"])
	r := backup(t, runOpts{dir: dir}, "verify", "-i", key.identity, arch)
	if r.code != exitFailed || !strings.Contains(r.stderr, "counts 0 skipped paths") {
		t.Errorf("verify -i against a sealed receipt counting 0 skipped of 1: exit %d, %s; want 1, naming the count", r.code, r.stdout+r.stderr)
	}
}
