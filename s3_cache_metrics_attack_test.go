package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackS3CacheMetricsIntoCopy gives create into a set in a bucket a --metrics-file
// inside its --cache-dir, at the name of the local copy of LATEST's archive. The one check
// compared the metrics file with the cache folder only as the same file: the run kept its
// own copy, removed the old one, wrote the metrics at its name and exited 0; the next run
// removed the metrics file as an old copy, exit 0, nothing said. Correct: exit 2 with one
// line, as for a metrics file in a backup set's folder, the copy as it was.
func TestAttackS3CacheMetricsIntoCopy(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	reuseTree(t, dir)
	cache := filepath.Join(dir, "cache")
	r, _ := s3Run(t, s, dir, "-q", "--cache-dir", cache)
	mustExit(t, r, exitComplete)
	copies := cacheFiles(t, cache)
	if len(copies) != 1 {
		t.Fatalf("cache: %q; want one copy", copies)
	}
	for _, metrics := range []string{copies[0], filepath.Join(cache, "m.prom")} {
		r, _ = s3Run(t, s, dir, "-q", "--cache-dir", cache, "--metrics-file", metrics)
		if r.code != exitUsage || strings.Count(strings.TrimSpace(r.stderr), "\n") > 1 {
			t.Errorf("--metrics-file %s: exit %d, stderr %q; want 2 and one line", metrics, r.code, r.stderr)
		}
	}
	if now := cacheFiles(t, cache); len(now) != 1 || now[0] != copies[0] || !sameBytes(t, now[0], filepath.Join(s.dir, readLatest(t, s.dir))) {
		t.Errorf("cache after: %q; want the copy of LATEST's archive as it was", now)
	}
	if _, err := os.Stat(filepath.Join(cache, "m.prom")); err == nil {
		t.Errorf("m.prom written inside the cache folder")
	}
}
