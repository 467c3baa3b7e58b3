package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// incompleteSet makes, as nobody, a set whose LATEST is a complete backup of app and whose
// newer run is incomplete (a file nobody cannot read), and returns the set, the complete
// backup and the incomplete one.
func incompleteSet(t *testing.T) (dir, set, good, partial string) {
	t.Helper()
	mustRoot(t)
	dir = sharedTempDir(t)
	as := runOpts{dir: dir, uid: nobody}
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"ok.txt": {content: "ok\n"}, "secret": {content: "s\n"}})
	set = filepath.Join(dir, "set")
	makeTree(t, set, map[string]node{".": {kind: "dir", mode: 0o777}})
	mustExit(t, backup(t, as, "create", "--output-dir", set, "app"), exitComplete)
	if err := os.Chmod(filepath.Join(dir, "app", "secret"), 0o200); err != nil {
		t.Fatal(err)
	}
	mustExit(t, backup(t, as, "create", "--output-dir", set, "app"), exitIncomplete)
	archives := setArchives(t, set)
	return dir, set, archives[0], archives[2]
}

// markComplete edits the receipt of name in set to say complete: the archive, whose
// manifest says incomplete, is not touched.
func markComplete(t *testing.T, set, name string) {
	t.Helper()
	editReceipt(t, filepath.Join(set, name+".receipt.json"), func(rc map[string]any) { rc["status"] = "complete" })
}

// TestActivateEditedReceipt: an incomplete run's receipt edited to say complete does not
// make it complete. activate refuses it (LATEST stays), verify reports the receipt as
// damage instead of "ok ... recorded incomplete; matches receipt", and the readers of a set
// whose LATEST names it (verify, list, restore) refuse it. The manifest's status, which the
// archive's SHA-256 covers, is what counts.
func TestActivateEditedReceipt(t *testing.T) {
	t.Parallel()
	dir, set, good, partial := incompleteSet(t)
	markComplete(t, set, partial)
	want := "says complete, but the manifest inside the archive says incomplete"

	for _, args := range [][]string{{"activate", set, partial}, {"activate", "--allow-incomplete", set, partial}} {
		r := backup(t, runOpts{}, args...)
		mustExit(t, r, exitFailed)
		if !strings.Contains(r.stderr, want) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%v: stderr %q, want one line with %q", args, r.stderr, want)
		}
		if got := readLatest(t, set); got != good {
			t.Errorf("%v moved LATEST to %q", args, got)
		}
	}
	r := backup(t, runOpts{}, "verify", filepath.Join(set, partial))
	mustExit(t, r, exitFailed)
	if !strings.Contains(r.stderr, want) || strings.Contains(r.stdout, "ok") {
		t.Errorf("verify: stdout %q, stderr %q; want the disagreement as a problem", r.stdout, r.stderr)
	}

	// LATEST itself on the edited run (as a LATEST edited by hand would leave it).
	if err := os.WriteFile(filepath.Join(set, "LATEST"), []byte(partial+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"verify", set}, {"list", set}, {"restore", set, filepath.Join(dir, "dest")}} {
		r := backup(t, runOpts{}, args...)
		mustExit(t, r, exitFailed)
		if !strings.Contains(r.stderr, want) {
			t.Errorf("%s of the set: stderr %q, want %q", args[0], r.stderr, want)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "dest")); err == nil {
		t.Error("restore of the edited LATEST wrote its destination")
	}
}

// TestActivateAnotherSource: activate refuses (exit 1, LATEST unchanged) a backup of another
// source lying in the set, by its name, and one renamed into the set's name whose entries
// are another source's; the next create of the set's source then still works.
func TestActivateAnotherSource(t *testing.T) {
	t.Parallel()
	for _, renamed := range []bool{false, true} {
		t.Run(map[bool]string{false: "by name", true: "renamed"}[renamed], func(t *testing.T) {
			t.Parallel()
			dir, set, _, b := newestSet(t)
			makeTree(t, filepath.Join(dir, "db"), map[string]node{"d": {content: "d\n"}})
			other := filepath.Join(dir, "other")
			mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", other, "db"), exitComplete)
			name := readLatest(t, other)
			into := name
			if renamed {
				into = strings.Replace(name, "db-", "app-", 1)
			}
			if err := os.WriteFile(filepath.Join(set, into), readFile(t, filepath.Join(other, name)), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(set, into+".receipt.json"), readFile(t, filepath.Join(other, name+".receipt.json")), 0o600); err != nil {
				t.Fatal(err)
			}
			editReceipt(t, filepath.Join(set, into+".receipt.json"), func(rc map[string]any) {
				rc["archive"].(map[string]any)["path"] = filepath.Join(set, into)
			})
			want := `the archive holds "db"`
			if renamed {
				want = `the archive's entries are under "db", its name says "app"`
			}
			r := backup(t, runOpts{}, "activate", set, into)
			mustExit(t, r, exitFailed)
			if !strings.Contains(r.stderr, want) || strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("stderr %q, want one line with %q", r.stderr, want)
			}
			if got := readLatest(t, set); got != b {
				t.Errorf("LATEST names %q, want %q", got, b)
			}
			mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app"), exitComplete)
		})
	}
}

// TestActivateRecordFails: the record of a hand-made activation cannot be written (ENOSPC
// injected on its rename) after LATEST moved. activate does not claim that nothing
// changed: it says LATEST moved (exit 0, the activation stands, as after a crash between the
// two) and, in one line, that the record is missing.
func TestActivateRecordFails(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	_, set, a, _ := newestSet(t)
	// -P: strace counts calls per thread, and Go may rename from any thread.
	cmd := exec.Command("strace", "-f", "-qq", "-o", os.DevNull, "-P", filepath.Join(set, "LATEST.activated"),
		"-e", "trace=renameat2", "-e", "inject=renameat2:error=ENOSPC", binary, "activate", set, a)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Run()
	if got := readLatest(t, set); got != a {
		t.Fatalf("LATEST names %q, want %q (the injected failure is the record's)", got, a)
	}
	if code := cmd.ProcessState.ExitCode(); code != exitComplete || !strings.Contains(stdout.String(), "LATEST -> "+a) {
		t.Errorf("exit %d, stdout %q; want %d and that LATEST moved", code, stdout.String(), exitComplete)
	}
	if !strings.Contains(stderr.String(), "LATEST.activated") || strings.Count(stderr.String(), "\n") != 1 || strings.Contains(stderr.String(), "as they were") {
		t.Errorf("stderr %q, want one line saying the record could not be written", stderr.String())
	}
}
