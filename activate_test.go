package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// newestSet makes a set with two real backups of app, A and B, LATEST on the newer B.
func newestSet(t *testing.T) (dir, set, a, b string) {
	t.Helper()
	dir = t.TempDir()
	set = filepath.Join(dir, "set")
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app"), exitComplete)
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"b": {content: "b\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app"), exitComplete)
	archives := setArchives(t, set)
	return dir, set, archives[0], archives[2]
}

// TestActivateRollback rolls a set back to its older backup: --dry-run changes nothing;
// activate moves LATEST and records why; status says LATEST is not the newest and why; prune
// keeps both; the next create moves LATEST forward and says so.
func TestActivateRollback(t *testing.T) {
	t.Parallel()
	dir, set, a, b := newestSet(t)

	r := backup(t, runOpts{}, "activate", "--dry-run", set, a)
	mustExit(t, r, exitComplete)
	if got := readLatest(t, set); got != b || !strings.Contains(r.stdout, "would point LATEST at "+a) {
		t.Errorf("dry run: LATEST %q, stdout %q; want LATEST still %q and what it would do", got, r.stdout, b)
	}
	if _, err := os.Stat(filepath.Join(set, "LATEST.activated")); err == nil {
		t.Error("the dry run wrote LATEST.activated")
	}

	r = backup(t, runOpts{}, "activate", set, filepath.Join(set, a))
	mustExit(t, r, exitComplete)
	if got := readLatest(t, set); got != a {
		t.Fatalf("after activate LATEST names %q, want %q", got, a)
	}
	r = backup(t, runOpts{}, "status", set)
	mustExit(t, r, exitComplete)
	want := "LATEST is not the newest complete backup (" + b + " is newer): activated by hand (backup activate) at "
	if !strings.Contains(r.stdout, want) {
		t.Errorf("status says:\n%s\nwant a line %q", r.stdout, want)
	}
	var st statusJSON
	r = backup(t, runOpts{}, "status", "--json", set)
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		t.Fatal(err)
	}
	if st.NewestComplete != b || st.Activated == nil || st.Activated.Archive != a || st.Activated.By != "activate" {
		t.Errorf("status --json: newest_complete %q, activated %+v; want %q and a record of %q", st.NewestComplete, st.Activated, b, a)
	}

	mustExit(t, backup(t, runOpts{}, "prune", "--keep-last", "1", set), exitComplete)
	if got := setArchives(t, set); len(got) != 4 {
		t.Errorf("prune --keep-last 1 after the rollback left %v; want both backups kept", got)
	}

	makeTree(t, filepath.Join(dir, "app"), map[string]node{"c": {content: "c\n"}})
	r = backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app")
	mustExit(t, r, exitComplete)
	if got := readLatest(t, set); got == a || got == b {
		t.Errorf("the next create left LATEST on %q", got)
	}
	if !strings.Contains(r.stderr, "LATEST moved forward from "+a+", activated by hand at ") {
		t.Errorf("create's stderr:\n%s\nwant it to say it moved past the activated %s", r.stderr, a)
	}
	if r = backup(t, runOpts{}, "status", set); strings.Contains(r.stdout, "by hand") {
		t.Errorf("status after the create still speaks of the activation:\n%s", r.stdout)
	}
}

// TestActivateRefused: activate fails closed (exit 1, LATEST and the set unchanged) on a
// damaged archive and on names that are not an archive of the set.
func TestActivateRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		damage func(t *testing.T, set, a string) string // returns the ARCHIVE argument
		want   string
	}{
		{"damaged archive", func(t *testing.T, set, a string) string {
			path := filepath.Join(set, a)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, flipByte(t, data, "app/a"), 0o644); err != nil {
				t.Fatal(err)
			}
			return a
		}, "not activating "},
		{"missing archive", func(t *testing.T, set, a string) string {
			return strings.Replace(a, "Z.zip", "Z-7.zip", 1)
		}, "the archive is missing"},
		{"receipt missing", func(t *testing.T, set, a string) string {
			os.Remove(filepath.Join(set, a+".receipt.json"))
			return a
		}, "its receipt is missing"},
		{"not a set's name", func(t *testing.T, set, a string) string { return "notes.zip" }, "not an archive of a set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, set, a, b := newestSet(t)
			arg := tt.damage(t, set, a)
			before := listDir(t, set)
			r := backup(t, runOpts{}, "activate", set, arg)
			mustExit(t, r, exitFailed)
			if !strings.Contains(r.stderr, tt.want) || strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("stderr %q, want one line with %q", r.stderr, tt.want)
			}
			if got := readLatest(t, set); got != b {
				t.Errorf("LATEST names %q after a refused activate, want %q", got, b)
			}
			if got := listDir(t, set); strings.Join(got, " ") != strings.Join(before, " ") {
				t.Errorf("the set holds %v after a refused activate, want %v", got, before)
			}
		})
	}
}

// TestActivateKilled kills activate (SIGKILL) held by strace just before and just after the
// rename that replaces LATEST: LATEST names the old archive or the new one, never nothing, and
// the set is healthy; the next activate works and clears the temp file left behind.
func TestActivateKilled(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	for _, when := range []string{"delay_enter", "delay_exit"} {
		t.Run(when, func(t *testing.T) {
			t.Parallel()
			_, set, a, b := newestSet(t)
			cmd := straced(t, "renameat2", when, "activate", set, a)
			want := b
			if when == "delay_exit" {
				want = a
				waitFor(t, "LATEST to move", func() bool {
					data, _ := os.ReadFile(filepath.Join(set, "LATEST"))
					return string(data) == a+"\n"
				})
			} else {
				waitFor(t, "LATEST's temp file", func() bool {
					temps, _ := filepath.Glob(filepath.Join(set, ".LATEST.tmp-*"))
					return len(temps) > 0
				})
			}
			killGroup(cmd)
			if got := readLatest(t, set); got != want {
				t.Errorf("after the kill LATEST names %q, want %q", got, want)
			}
			mustExit(t, backup(t, runOpts{}, "status", set), exitComplete)
			// The killed binary may outlive strace for a moment, holding the lock.
			mustExit(t, backup(t, runOpts{}, "activate", "--wait", "30s", set, b), exitComplete)
			if temps, _ := filepath.Glob(filepath.Join(set, ".*.tmp-*")); len(temps) > 0 {
				t.Errorf("temp files left after the next activate: %v", temps)
			}
		})
	}
}

// straced starts the binary under strace, each call of syscall held for a minute on entry
// or exit (when: delay_enter, delay_exit), in a process group of its own.
func straced(t *testing.T, syscallName, when string, args ...string) *exec.Cmd {
	t.Helper()
	sargs := append([]string{"-f", "-o", "/dev/null", "-e", "trace=" + syscallName,
		"-e", "inject=" + syscallName + ":" + when + "=60000000", binary}, args...)
	cmd := exec.Command("strace", sargs...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killGroup(cmd) })
	return cmd
}

// killGroup sends SIGKILL to strace and the binary it runs, and waits for strace.
func killGroup(cmd *exec.Cmd) {
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()
}

// TestActivateIncomplete: a backup that is incomplete (its manifest says so, and its receipt)
// is activated only with --allow-incomplete.
func TestActivateIncomplete(t *testing.T) {
	t.Parallel()
	_, set, good, partial := incompleteSet(t)
	r := backup(t, runOpts{}, "activate", set, partial)
	mustExit(t, r, exitFailed)
	if !strings.Contains(r.stderr, "the backup is incomplete") || readLatest(t, set) != good {
		t.Errorf("stderr %q, LATEST %q; want a refusal and LATEST on %q", r.stderr, readLatest(t, set), good)
	}
	mustExit(t, backup(t, runOpts{}, "activate", "--allow-incomplete", set, partial), exitComplete)
	if got := readLatest(t, set); got != partial {
		t.Errorf("--allow-incomplete left LATEST on %q, want %q", got, partial)
	}
}

// TestAttackDocsRecoveryRollBack follows docs/recovery.md's "Roll back to an older backup"
// as written: activate the last good backup, then restore --force the set into the folder
// above the source. The recipe restored into the source itself (/srv/app), which gives the
// tree stored as app/... a second copy in /srv/app/app and leaves the broken files as they
// are.
func TestAttackDocsRecoveryRollBack(t *testing.T) {
	dir := t.TempDir()
	srv, set := filepath.Join(dir, "srv"), filepath.Join(dir, "backups", "app")
	src := filepath.Join(srv, "app")
	makeTree(t, src, map[string]node{"config.toml": {content: "good\n"}})
	mustExit(t, backup(t, runOpts{}, "create", "-q", "--output-dir", set, src), exitComplete)
	good := readLatest(t, set)
	makeTree(t, src, map[string]node{"config.toml": {content: "broken by the upgrade\n"}})
	mustExit(t, backup(t, runOpts{}, "create", "-q", "--output-dir", set, src), exitComplete)

	mustExit(t, backup(t, runOpts{}, "activate", set, good), exitComplete)
	mustExit(t, backup(t, runOpts{}, "restore", "--force", set, srv), exitComplete)
	if got, _ := os.ReadFile(filepath.Join(src, "config.toml")); string(got) != "good\n" {
		t.Errorf("after the roll-back, %s holds %q, want the good backup's", filepath.Join(src, "config.toml"), got)
	}
	if _, err := os.Lstat(filepath.Join(src, "app")); err == nil {
		t.Errorf("the roll-back made %s: a second copy inside the source", filepath.Join(src, "app"))
	}
}
