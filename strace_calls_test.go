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

// TestStraceCallsReturned: a call is returned once its result is written (whole, joined
// again, padded to strace's column); its entry alone, cut or unended, is not.
func TestStraceCallsReturned(t *testing.T) {
	log := "12 renameat2(AT_FDCWD, \"a\", AT_FDCWD, \"b\", 0 <unfinished ...>\n" +
		"13 read(3, \"hi\\n\", 131072)           = 3 (DELAYED)\n" +
		"12 <... renameat2 resumed>)             = 0\n" +
		"14 linkat(AT_FDCWD, \"x\", AT_FDCWD, \"y\", 0 <unfinished ...>\n" + // held on entry
		"15 newfstatat(AT_FDCWD</tmp>, \"/tmp/t\", " // held on entry, nothing written since
	want := []bool{true, true, false, false}
	var got []bool
	for _, c := range straceCalls(log) {
		got = append(got, returned(c))
	}
	if !slices.Equal(got, want) {
		t.Errorf("returned of %q: %v, want %v", straceCalls(log), got, want)
	}
}
