package main

import (
	"fmt"
	"slices"
	"testing"
)

// TestStraceCalls: the halves of a call strace -f cut are joined again, whatever else the
// log holds between them, and whatever the pid's width: strace pads it to 5 columns, so a
// fresh machine's 4-digit pids come with two spaces (CI missed a cut pread64 so at f76084c).
func TestStraceCalls(t *testing.T) {
	for _, pid := range [][2]string{{"3804", "3805"}, {"12345", "12346"}, {"12", "13"}} {
		p12, p13 := pad(pid[0]), pad(pid[1])
		log := p12 + "pread64(7</a/db>,  <unfinished ...>\n" + // strace writes the space after the comma too
			p13 + "openat(AT_FDCWD, \"/a/db\", O_RDONLY) = 8\n" +
			p12 + "<... pread64 resumed>\"\\0\"..., 4096, 16384) = 4096\n" +
			p13 + "pread64(8</a/db>, \"x\", 1, 0) = 1"
		want := []string{
			pid[0] + " pread64(7</a/db>, \"\\0\"..., 4096, 16384) = 4096",
			p13 + "openat(AT_FDCWD, \"/a/db\", O_RDONLY) = 8",
			p13 + "pread64(8</a/db>, \"x\", 1, 0) = 1",
		}
		if got := straceCalls(log); !slices.Equal(got, want) {
			t.Errorf("straceCalls:\n%q\nwant\n%q", got, want)
		}
	}
}

// pad is a pid as strace -f writes it at the head of a line.
func pad(pid string) string {
	return fmt.Sprintf("%-5s ", pid)
}

// TestStraceCallsReturned: a call is returned once its result is written (whole, joined
// again, padded to strace's column); its entry alone, cut or unended, is not.
func TestStraceCallsReturned(t *testing.T) {
	log := pad("1200") + "renameat2(AT_FDCWD, \"a\", AT_FDCWD, \"b\", 0 <unfinished ...>\n" +
		pad("1300") + "read(3, \"hi\\n\", 131072)           = 3 (DELAYED)\n" +
		pad("1200") + "<... renameat2 resumed>)             = 0\n" +
		pad("1400") + "linkat(AT_FDCWD, \"x\", AT_FDCWD, \"y\", 0 <unfinished ...>\n" + // held on entry
		pad("1500") + "newfstatat(AT_FDCWD</tmp>, \"/tmp/t\", " // held on entry, nothing written since
	want := []bool{true, true, false, false}
	var got []bool
	for _, c := range straceCalls(log) {
		got = append(got, returned(c))
	}
	if !slices.Equal(got, want) {
		t.Errorf("returned of %q: %v, want %v", straceCalls(log), got, want)
	}
}
