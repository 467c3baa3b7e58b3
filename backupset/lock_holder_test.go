package backupset

import "testing"

func TestFlockLine(t *testing.T) {
	tests := []struct {
		line  string
		pid   int
		found bool
	}{
		{"1: FLOCK  ADVISORY  WRITE 4242 fe:00:131 0 EOF", 4242, true},
		{"2: POSIX  ADVISORY  WRITE 77 fe:00:131 0 EOF", 77, true},
		{"1: -> FLOCK  ADVISORY  WRITE 99 fe:00:131 0 EOF", 0, false}, // waiting, not held
		{"3: FLOCK  ADVISORY  WRITE 4242 fe:00:1310 0 EOF", 0, false}, // another inode
		{"4: OFDLCK ADVISORY  WRITE -1 fe:00:131 0 EOF", 0, false},
		{"5: FLOCK  ADVISORY  WRITE 0 fe:00:131 0 EOF", 0, true}, // another pid namespace's
	}
	for _, tt := range tests {
		pid, found := flockLine(tt.line, "fe:00:131")
		if pid != tt.pid || found != tt.found {
			t.Errorf("flockLine(%q) = %d, %v; want %d, %v", tt.line, pid, found, tt.pid, tt.found)
		}
	}
}
