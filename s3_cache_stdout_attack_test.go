package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackS3CacheStdoutIntoCopy runs create into a set in a bucket with stdout appended
// (>>) to the local copy of LATEST's archive in its --cache-dir. The cache folder is an
// output like the others, but the one check compared stdout's file with it only as the same
// file, never as a file inside it: the run reused from the copy, wrote its report into it,
// then removed it for the copy of its own archive, and exited 0; the report was lost with
// the file the user named. Correct: exit 2 with one line before anything is written, the
// copy as it was.
func TestAttackS3CacheStdoutIntoCopy(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	reuseTree(t, dir)
	cache := filepath.Join(dir, "cache")
	r, _ := s3Run(t, s, dir, "-q", "--cache-dir", cache)
	mustExit(t, r, exitComplete)
	for _, tc := range []struct {
		into string // "" for the copy
		args []string
	}{
		{"", []string{"--json"}},
		{"", []string{"--json-lines"}},
		{filepath.Join(cache, "CACHEDIR.TAG"), []string{"--json-lines"}},
	} {
		if tc.into == "" {
			copies := cacheFiles(t, cache)
			if len(copies) != 1 {
				t.Fatalf("cache: %q; want one copy", copies)
			}
			tc.into = copies[0]
		}
		before, err := os.ReadFile(tc.into)
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(tc.into, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(binary, append(append([]string{"create", "--output-dir", s.loc, "--cache-dir", cache}, tc.args...), "app")...)
		cmd.Dir, cmd.Stdout, cmd.Env = dir, f, append(os.Environ(), s.env...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		cmd.Run()
		f.Close()
		after, _ := os.ReadFile(tc.into)
		code := cmd.ProcessState.ExitCode()
		if code != exitUsage || strings.Count(strings.TrimSpace(stderr.String()), "\n") > 1 || !bytes.Equal(before, after) {
			t.Errorf("%q >> %s: exit %d, stderr %q, file unchanged %v; want 2, one line, unchanged", tc.args, tc.into, code, stderr.String(), bytes.Equal(before, after))
		}
	}
	// Outside the cache folder stdout's file is fine.
	report := filepath.Join(dir, "report.json")
	f, err := os.Create(report)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "create", "--json", "--output-dir", s.loc, "--cache-dir", cache, "app")
	cmd.Dir, cmd.Stdout, cmd.Env = dir, f, append(os.Environ(), s.env...)
	err = cmd.Run()
	f.Close()
	if data, _ := os.ReadFile(report); err != nil || !strings.Contains(string(data), `"status": "complete"`) {
		t.Errorf("create --json > report.json: %v, report %q; want exit 0 and the report", err, data)
	}
}
