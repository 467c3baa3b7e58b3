package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAttackFailedSealedRunsOpenSetToPlaintext: a set whose runs all failed (the first
// night's source was missing) holds no archive, only their receipts, and took a run of any
// kind: a run encrypted to --recipient failed, the host then lost its --recipient (an empty
// variable), and the next run wrote a plain zip of everything into the set, named by its
// source, and said complete; the failed runs' receipts (…Z.zip.age.receipt.json, schema
// v2) said it was an encrypted set. A failed run says nothing of the set's source, but its
// kind is the set's: the plain run is refused (exit 2, nothing written) unless
// --allow-plaintext, and an encrypted run into a set of failed plain runs likewise; adopt
// refuses an archive of the other kind too.
func TestAttackFailedSealedRunsOpenSetToPlaintext(t *testing.T) {
	t.Parallel()
	key := newAgeKey(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "the plaintext\n"}})
	for _, c := range []struct {
		set, want           string
		first, second, plus []string
	}{
		{"sealed", "encrypted backup set", []string{"--recipient", key.recipient}, nil, nil},
		{"plain", "plain backup set", nil, []string{"--recipient", key.recipient}, nil},
	} {
		run := func(keyArgs []string, src string, more ...string) result {
			args := append([]string{"create", "-q", "--output-dir", c.set}, keyArgs...)
			return backup(t, runOpts{dir: dir}, append(append(args, more...), src)...)
		}
		mustExit(t, run(c.first, "missing"), exitFailed)
		before := listDir(t, filepath.Join(dir, c.set))
		r := run(c.second, "app")
		if r.code != exitUsage || !strings.Contains(r.stderr, c.want) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%s: a run of the other kind: exit %d, stderr %q; want 2, one line saying %q", c.set, r.code, r.stderr, c.want)
		}
		if got := listDir(t, filepath.Join(dir, c.set)); !slices.Equal(got, before) {
			t.Errorf("%s: the refused run left %q; want %q", c.set, got, before)
		}
		mustExit(t, run(c.first, "app"), exitComplete)
	}
	// Nor does adopt bring a plain archive into such a set.
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "adopting", "--recipient", key.recipient, "missing"), exitFailed)
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "plain.zip", "app"), exitComplete)
	before := listDir(t, filepath.Join(dir, "adopting"))
	r := backup(t, runOpts{dir: dir}, "adopt", "adopting", "plain.zip")
	if r.code != exitFailed || !strings.Contains(r.stderr, "is an encrypted backup set") {
		t.Errorf("adopt of a plain archive: exit %d, stderr %q; want 1, saying the set is encrypted", r.code, r.stderr)
	}
	if got := listDir(t, filepath.Join(dir, "adopting")); !slices.Equal(got, before) {
		t.Errorf("the refused adopt left %q; want %q", got, before)
	}
	// --allow-plaintext takes it, as for a set with an archive.
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "mixed", "--recipient", key.recipient, "missing"), exitFailed)
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "mixed", "--allow-plaintext", "app"), exitComplete)
}
