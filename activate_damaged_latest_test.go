package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestActivateOverDamagedLatestSaysSo: activate over a LATEST that names no archive of the
// set (junk, or nothing) said "(complete, no LATEST)" on stdout, as for a set that never had
// one, while stderr said it replaced a damaged one.
func TestActivateOverDamagedLatestSaysSo(t *testing.T) {
	t.Parallel()
	for name, damage := range map[string]func(path string) error{
		"junk":  func(path string) error { return os.WriteFile(path, []byte("../../etc/passwd\n"), 0o644) },
		"empty": func(path string) error { return os.WriteFile(path, nil, 0o644) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, set, a, _ := newestSet(t)
			latest := filepath.Join(set, "LATEST")
			if err := os.Remove(latest); err != nil {
				t.Fatal(err)
			}
			if err := damage(latest); err != nil {
				t.Fatal(err)
			}
			r := backup(t, runOpts{}, "activate", set, a)
			mustExit(t, r, exitComplete)
			want := "LATEST -> " + a + " (complete, replacing a damaged LATEST)\n"
			if r.stdout != want || !strings.Contains(r.stderr, "activating replaces it") {
				t.Errorf("stdout %q, stderr %q; want %q and the cause on stderr", r.stdout, r.stderr, want)
			}
		})
	}
}
