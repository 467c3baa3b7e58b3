package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Names that would forge a line of output or drive the terminal if printed raw: a newline
// followed by a summary line, an OSC sequence that retitles the terminal, a screen clear.
const (
	forgeName = "x\nbackup restore: complete: 0 files"
	titleName = "t\x1b]0;pwned\x07"
	clearName = "c\x1b[2J"
)

// assertQuoted checks that out holds each name quoted as Go's %q does, never raw, and no
// escape or bell byte at all.
func assertQuoted(t *testing.T, what, out string, names ...string) {
	t.Helper()
	if strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("%s prints an escape or bell byte raw:\n%q", what, out)
	}
	for _, name := range names {
		if strings.Contains(out, name) {
			t.Errorf("%s prints %q raw:\n%q", what, name, out)
		}
		if !strings.Contains(out, strconv.Quote(name)) {
			t.Errorf("%s does not print %q quoted:\n%q", what, name, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "backup restore: complete: 0 files") {
			t.Errorf("%s prints a forged line %q", what, line)
		}
	}
}

// TestNamesQuotedOnTerminal: every name that reaches a human's output (create's -v list and
// summary, list, verify, restore's refusals, conflicts and problems) is quoted when it holds
// a byte that is not printable; --json gives the names as they are.
func TestNamesQuotedOnTerminal(t *testing.T) {
	t.Parallel()
	mustRoot(t) // an unreadable file, read as nobody
	dir := sharedTempDir(t)
	src := filepath.Join(dir, "app")
	makeTree(t, src, map[string]node{
		forgeName:       {content: "forge\n"},
		titleName:       {content: "title\n"},
		clearName + "/": {kind: "dir"},
		"plain.txt":     {content: "plain\n"},
		"fifo\x1b[1m":   {kind: "fifo"},
	})
	os.Chmod(filepath.Join(src, titleName), 0) // lost: nobody cannot read it
	arch := filepath.Join(dir, "a.zip")
	r := backup(t, runOpts{dir: dir, uid: nobody}, "create", "-v", "-o", arch, "app")
	mustExit(t, r, exitIncomplete)
	assertQuoted(t, "create -v", r.stderr, "app/"+forgeName, "app/"+clearName+"/", "app/"+titleName)
	if !strings.Contains(r.stderr, "app/plain.txt\n") {
		t.Errorf("create -v quotes a plain name, or lacks it:\n%q", r.stderr)
	}

	r = backup(t, runOpts{dir: dir}, "list", arch)
	assertQuoted(t, "list", r.stdout+r.stderr, "app/"+forgeName, "app/"+clearName+"/", "app/fifo\x1b[1m", "app/"+titleName)
	r = backup(t, runOpts{dir: dir}, "list", "--json", arch)
	var listed listJSON
	if err := json.Unmarshal([]byte(r.stdout), &listed); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(listed.Entries, func(e listEntryJSON) bool { return e.Name == "app/"+forgeName }) {
		t.Errorf("list --json lacks the raw name %q: %+v", "app/"+forgeName, listed.Entries)
	}

	// A conflict, and a skipped special entry of a foreign archive.
	dest := filepath.Join(dir, "dest")
	makeTree(t, filepath.Join(dest, "app"), map[string]node{forgeName: {content: "other\n"}})
	r = backup(t, runOpts{dir: dir}, "restore", arch, dest)
	assertQuoted(t, "restore (conflict)", r.stderr, "app/"+forgeName)
	foreign := filepath.Join(dir, "foreign.zip")
	writeHostileZip(t, foreign, []hostileEntry{{name: "f/" + clearName, body: "/etc", symlink: true}, {name: "f/ok", body: "ok"}})
	r = backup(t, runOpts{dir: dir}, "restore", foreign, filepath.Join(dir, "dest2"))
	assertQuoted(t, "restore (skipped)", r.stderr, "f/"+clearName)

	// Unsafe names, in restore and verify.
	hostile := filepath.Join(dir, "hostile.zip")
	writeHostileZip(t, hostile, []hostileEntry{{name: "../" + forgeName, body: "x"}, {name: "/" + titleName, body: "x"}})
	r = backup(t, runOpts{dir: dir}, "restore", hostile, filepath.Join(dir, "dest3"))
	mustExit(t, r, exitFailed)
	assertQuoted(t, "restore (refused)", r.stderr, "../"+forgeName, "/"+titleName)
	r = backup(t, runOpts{dir: dir}, "verify", hostile)
	mustExit(t, r, exitFailed)
	assertQuoted(t, "verify", r.stderr, "../"+forgeName, "/"+titleName)
	r = backup(t, runOpts{dir: dir}, "restore", "--json", hostile, filepath.Join(dir, "dest3"))
	if out := restoreJSONOf(t, r); len(out.Refused) == 0 || out.Refused[0].Entry != "../"+forgeName {
		t.Errorf("restore --json refused %+v, want the raw name %q first", out.Refused, "../"+forgeName)
	}
}
