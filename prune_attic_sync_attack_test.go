package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackPruneAtticSyncEIOSaysNotMoved: prune --keep-last 1 --attic DIR, DIR on the set's
// file system: the older run's archive and receipt are renamed into DIR, then DIR is synced,
// and that fsync fails (EIO). The run had left the set and was in the attic, but prune said
// "moved to DIR 0, then stopped" (--json: no "moved", "runs": []), as if the run stayed
// whole in the set, as docs/sets.md has it when a move cannot be made whole; a plain prune
// whose sync of the set fails after a delete says "deleted 1, then stopped".
// Correct: the run is counted as moved (its decision listed), with the error on stderr.
func TestAttackPruneAtticSyncEIOSaysNotMoved(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir, set, a, _ := newestSet(t)
	attic := filepath.Join(dir, "attic")
	if err := os.Mkdir(attic, 0o755); err != nil {
		t.Fatal(err)
	}
	r := straceRun(t, dir, attic, "fsync", "fsync:error=EIO:when=1",
		"prune", "--json", "--keep-last", "1", "--attic", attic, set)
	mustExit(t, r, exitFailed)
	if !exists(filepath.Join(attic, a)) || exists(filepath.Join(set, a)) {
		t.Fatalf("the test needs %s moved into the attic; stderr:\n%s", a, r.stderr)
	}
	var out pruneJSON
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("--json: %v\n%s", err, r.stdout)
	}
	if out.Moved != 1 || len(out.Runs) == 0 || out.Runs[0].Name != a || !strings.Contains(r.stderr, "input/output error") {
		t.Errorf("%s is in the attic and gone from the set, but prune --json says moved %d, runs %+v; stderr:\n%s", a, out.Moved, out.Runs, r.stderr)
	}
}

// TestAttackPruneAtticReceiptDeleteEIOSaysNotMoved: prune --keep-last 1 --attic DIR, DIR on
// another file system (a tmpfs): the older run is copied into DIR, then deleted from the
// set, archive first; the delete of its receipt fails (EIO). The archive had left the set
// for the attic, but prune said "moved to DIR 0, then stopped" (--json: no "moved", "runs":
// []), while a plain prune whose receipt delete fails lists the run, "its receipt left".
// Correct: the run is counted as moved, its receipt said to be left; the next prune
// finishes the move without help.
func TestAttackPruneAtticReceiptDeleteEIOSaysNotMoved(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir, set, a, _ := newestSet(t)
	attic := filepath.Join(dir, "attic")
	if err := os.Mkdir(attic, 0o755); err != nil {
		t.Fatal(err)
	}
	mountTmpfs(t, attic, "1m")
	r := straceRun(t, dir, filepath.Join(set, a+".receipt.json"), "unlinkat", "unlinkat:error=EIO:when=1",
		"prune", "--json", "--keep-last", "1", "--attic", attic, set)
	mustExit(t, r, exitFailed)
	if !exists(filepath.Join(attic, a)) || exists(filepath.Join(set, a)) || !exists(filepath.Join(set, a+".receipt.json")) {
		t.Fatalf("the test needs %s moved into the attic, its receipt left in the set; stderr:\n%s", a, r.stderr)
	}
	var out pruneJSON
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("--json: %v\n%s", err, r.stdout)
	}
	if out.Moved != 1 || len(out.Runs) == 0 || out.Runs[0].Name != a || !out.Runs[0].ReceiptLeft {
		t.Errorf("%s is in the attic and gone from the set, but prune --json says moved %d, runs %+v; stderr:\n%s", a, out.Moved, out.Runs, r.stderr)
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "prune", "--keep-last", "1", "--attic", attic, set), exitComplete)
	if exists(filepath.Join(set, a+".receipt.json")) || !exists(filepath.Join(attic, a+".receipt.json")) {
		t.Errorf("the next prune left %s's receipt in the set", a)
	}
}
