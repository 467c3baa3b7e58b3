package archive

import (
	"testing"

	"backup/format"
	"backup/walker"
)

// TestWalkerOps: the walker is a leaf and names the ops of its errors itself; the archiver
// hands those errors on as warnings, so the walker's ops must be spelled as format's.
func TestWalkerOps(t *testing.T) {
	for _, tt := range []struct{ walker, format string }{
		{walker.OpStat, format.OpStat},
		{walker.OpOpen, format.OpOpen},
		{walker.OpReadDir, format.OpReadDir},
		{walker.OpXattr, format.OpXattr},
	} {
		if tt.walker != tt.format {
			t.Errorf("walker's op %q, format's %q", tt.walker, tt.format)
		}
	}
}
