package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestS3ArchiveURLNamesItsSet: a bucket has no archive files to name, so s3://B/P/NAME.zip
// is read as a set called NAME.zip, which is empty. restore and verify said only "no
// backup in s3://B/P/NAME.zip yet", which reads as if the archive were gone; the line now
// says that a location names a set, and which one to give.
func TestS3ArchiveURLNamesItsSet(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "x"}})
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "-q", "--output-dir", s.loc, "app"), exitComplete)
	url := s.loc + "/" + readLatest(t, s.dir)
	hint := "(" + url + " names a set, and \"" + readLatest(t, s.dir) + "\" is an archive's name: give its set, " + s.loc + ", which reads the archive LATEST names)"
	for _, args := range [][]string{{"verify", url}, {"restore", url, filepath.Join(dir, "dest")}, {"list", url}} {
		r := backup(t, runOpts{dir: dir, env: s.env}, args...)
		if r.code == exitComplete || !strings.Contains(r.stderr, "no backup in "+url+" yet "+hint) {
			t.Errorf("%s of an archive's URL: exit %d, stderr %q; want it to say %q", args[0], r.code, r.stderr, hint)
		}
	}
	// A set's own location keeps the plain line.
	r := backup(t, runOpts{dir: dir, env: s.env}, "verify", s.loc+"/empty")
	if !strings.Contains(r.stderr, "no backup in "+s.loc+"/empty yet\n") {
		t.Errorf("verify of an empty set: stderr %q", r.stderr)
	}
}
