package main

import (
	"strings"
	"testing"
)

// TestAttackLongFlagValueEchoed: a file's content pasted as a flag's value (here 3,000
// bytes for --keep-within, --level and --wait) was printed whole, twice (pflag's message
// and its cause), on one stderr line: 6 KB, up to 256 KiB for the kernel's largest argument.
// Found by the paths pass. Correct: exit 2, the flag named with the value's first 64 bytes
// and its length.
func TestAttackLongFlagValueEchoed(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 3000)
	for _, args := range [][]string{
		{"prune", "--keep-within", long, t.TempDir()},
		{"create", "--level", long, "-o", "-", "."},
		{"status", "--max-age", long, t.TempDir()},
	} {
		r := backup(t, runOpts{}, args...)
		mustExit(t, r, exitUsage)
		want := `invalid argument "` + long[:64] + `"… (3000 bytes) for "` + args[1] + `" flag`
		if len(r.stderr) > 300 || !strings.Contains(r.stderr, want) {
			t.Errorf("%s %s: stderr of %d bytes: %.300q; want %q", args[0], args[1], len(r.stderr), r.stderr, want)
		}
	}
}
