package main

import (
	"slices"
	"testing"
)

// TestStraceCalls: the halves of a call strace -f cut are joined again, whatever else the
// log holds between them.
func TestStraceCalls(t *testing.T) {
	log := "12 pread64(7</a/db>,  <unfinished ...>\n" + // strace writes the space after the comma too
		"13 openat(AT_FDCWD, \"/a/db\", O_RDONLY) = 8\n" +
		"12 <... pread64 resumed>\"\\0\"..., 4096, 16384) = 4096\n" +
		"13 pread64(8</a/db>, \"x\", 1, 0) = 1"
	want := []string{
		"12 pread64(7</a/db>, \"\\0\"..., 4096, 16384) = 4096",
		"13 openat(AT_FDCWD, \"/a/db\", O_RDONLY) = 8",
		"13 pread64(8</a/db>, \"x\", 1, 0) = 1",
	}
	if got := straceCalls(log); !slices.Equal(got, want) {
		t.Errorf("straceCalls:\n%q\nwant\n%q", got, want)
	}
}
