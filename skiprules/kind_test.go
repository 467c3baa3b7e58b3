package skiprules

import (
	"io/fs"
	"testing"
)

func TestKindOfMode(t *testing.T) {
	tests := []struct {
		name string
		mode fs.FileMode
		want Kind
	}{
		{"regular", 0o644, ""},
		{"directory", fs.ModeDir | 0o755, ""},
		{"symlink", fs.ModeSymlink | 0o777, KindSymlink},
		{"socket", fs.ModeSocket | 0o755, KindSocket},
		{"fifo", fs.ModeNamedPipe | 0o644, KindFIFO},
		{"block device", fs.ModeDevice | 0o660, KindDevice},
		{"char device", fs.ModeDevice | fs.ModeCharDevice | 0o666, KindDevice},
		{"char device bit alone", fs.ModeCharDevice, KindDevice},
		{"irregular", fs.ModeIrregular, KindOther},
		{"setuid regular", fs.ModeSetuid | 0o755, ""},
		{"sticky directory", fs.ModeDir | fs.ModeSticky | 0o777, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := KindOf(tt.mode); got != tt.want {
				t.Errorf("KindOf(%v) = %q, want %q", tt.mode, got, tt.want)
			}
		})
	}
}
