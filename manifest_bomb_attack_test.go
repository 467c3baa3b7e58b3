package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// maxBombRSS is the most memory a command may take to refuse the manifest bomb below: the
// process's own (about 20 MiB) and the one record it reads before it stops.
const maxBombRSS = 100 << 20

// TestAttackManifestOneHugeRecord: a backup whose manifest was rewritten to hold one warning
// with a 48 MiB path (the archive about 50 KiB) made list take about 7 times that in
// memory, verify 3 times, before saying anything: 400 MB of path in a 390 KB archive took
// 3 GB. No honest record comes near 16 MiB (a zip name is at most 64 KiB, a file's
// attributes at most 8 MiB), so a record past it is refused at once, in little memory.
func TestAttackManifestOneHugeRecord(t *testing.T) {
	t.Parallel()
	refusesManifestBomb(t, hugeWarning(strings.Repeat("x", 48<<20)), errHugeRecord, "list", "verify", "restore")
}

// TestAttackManifestEscapedHugeRecord: the same bomb with a path of 24 Mi newlines, which
// the manifest holds as 48 MiB of `\n` escapes: the reader checked a string's size only
// where a run of bytes without a backslash ended, so a string of nothing but escapes was
// held whole, whatever its length, and refused only at its end.
func TestAttackManifestEscapedHugeRecord(t *testing.T) {
	t.Parallel()
	refusesManifestBomb(t, hugeWarning(strings.Repeat("\n", 24<<20)), errHugeRecord, "list", "verify")
}

// TestAttackManifestTinyFileRecords: a backup of one file whose manifest was rewritten to
// list two million files as `{}` (6 MB of JSON, an 8 KB archive) made verify, list and
// restore hold every record, 0.7 to 1 GB, before finding that the first has no path.
// Each record of a file, folder or symlink names an entry, so a reader stops once far more
// of them than the archive's entries are read.
//
// The key in another case ("FILES", the same field to encoding/json) was decoded whole, as
// any other field, past that bound.
func TestAttackManifestTinyFileRecords(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"files", "FILES"} {
		tiny := func(m map[string]any) { m[key] = make([]struct{}, 2_000_000) }
		refusesManifestBomb(t, tiny, "65541 files, folders and symlinks or more, for an archive of 2 entries", "list", "verify", "restore")
	}
}

const errHugeRecord = "a record of more than 16777216 bytes"

// hugeWarning rewrites a manifest to hold one warning, of path app/+name.
func hugeWarning(name string) func(map[string]any) {
	return func(m map[string]any) {
		m["status"] = "incomplete"
		m["warnings"] = []any{map[string]any{"path": "app/" + name, "op": "open", "error": "denied", "lost": true}}
	}
}

// refusesManifestBomb runs each command on a backup of one file whose manifest edit
// rewrites, and checks that it is refused as want says, in little memory.
func refusesManifestBomb(t *testing.T, edit func(map[string]any), want string, commands ...string) {
	t.Helper()
	runsManifestBomb(t, edit, exitFailed, want, commands...)
}

// runsManifestBomb runs each command on a backup of one file whose manifest edit rewrites,
// and checks that it exits with code, saying want, in little memory.
func runsManifestBomb(t *testing.T, edit func(map[string]any), code int, want string, commands ...string) {
	t.Helper()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"a.txt": {content: "alpha\n"}})
	honest := filepath.Join(dir, "honest.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", honest, "src/app"), exitComplete)
	bomb := filepath.Join(dir, "bomb.zip")
	rewriteManifest(t, honest, bomb, edit)
	for _, command := range commands {
		args := []string{command, bomb}
		if command == "restore" {
			args = append(args, filepath.Join(dir, "dest"))
		}
		got, output, rss := runMeasured(t, dir, args...)
		if line := lastLines(output, 1); got != code || !strings.Contains(output, want) {
			t.Errorf("%s: exit %d, %.200q; want %d and %q", command, got, line, code, want)
		}
		if !raceEnabled && rss > maxBombRSS {
			t.Errorf("%s: peak RSS %d MiB, want at most %d MiB", command, rss>>20, maxBombRSS>>20)
		}
	}
}

// TestAttackManifestTinyNoteRecords: a backup whose manifest was rewritten to list five
// million skipped paths as `{}` (15 MB of JSON, a 15 KB archive) made verify hold 590 MB
// and restore 750 MB, 9 to 10 s each, for records neither uses: only list shows them. They
// are now checked as they are read and let go.
func TestAttackManifestTinyNoteRecords(t *testing.T) {
	t.Parallel()
	tiny := func(m map[string]any) { m["skipped"] = make([]struct{}, 5_000_000) }
	runsManifestBomb(t, tiny, exitComplete, "", "verify", "restore")
}

// TestAttackManifestTinyCreatedRecords: a backup of one file whose manifest was rewritten to
// list five million paths as created by a restore, each `{}` (15 MB of JSON, a 15 KB
// archive), made verify hold 1.3 GB and restore and list 2 GB, 15 s each, before saying the
// first has no path. What a before-state lists as created is not bounded by its entries (a
// restore into an empty folder creates them all), but each record is checked as it is read.
func TestAttackManifestTinyCreatedRecords(t *testing.T) {
	t.Parallel()
	tiny := func(m map[string]any) { m["created"] = make([]struct{}, 5_000_000) }
	refusesManifestBomb(t, tiny, "a created path has no path", "verify", "restore", "list")
}
