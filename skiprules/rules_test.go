package skiprules

import (
	"io/fs"
	"testing"
	"time"
)

func TestDecideZeroRules(t *testing.T) {
	tests := []struct {
		name string
		mode fs.FileMode
		want Decision
	}{
		{"regular file", 0o644, Decision{Action: Archive}},
		{"directory", fs.ModeDir | 0o755, Decision{Action: Archive}},
		{"symlink", fs.ModeSymlink, Decision{Action: Skip, Kind: KindSymlink}},
		{"socket", fs.ModeSocket, Decision{Action: Skip, Kind: KindSocket}},
		{"fifo", fs.ModeNamedPipe, Decision{Action: Skip, Kind: KindFIFO}},
		{"device", fs.ModeDevice, Decision{Action: Skip, Kind: KindDevice}},
		{"irregular", fs.ModeIrregular, Decision{Action: Skip, Kind: KindOther}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info := fakeInfo{name: "x", mode: tt.mode}
			if got := (Rules{}).Decide(nil, "x", info, 0); got != tt.want {
				t.Errorf("Decide = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestDeviceOfNoStat covers infos that did not come from a unix lstat,
// such as fstest.MapFS gives.
func TestDeviceOfNoStat(t *testing.T) {
	tests := []struct {
		name string
		sys  any
		want uint64
	}{
		{"no sys", nil, 0},
		{"foreign sys", "not a stat", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DeviceOf(fakeInfo{name: "x", sys: tt.sys}); got != tt.want {
				t.Errorf("DeviceOf = %d, want %d", got, tt.want)
			}
		})
	}
}

// fakeInfo is an fs.FileInfo with just the fields Decide looks at.
type fakeInfo struct {
	name string
	mode fs.FileMode
	sys  any
}

func (f fakeInfo) Name() string       { return f.name }
func (f fakeInfo) Size() int64        { return 0 }
func (f fakeInfo) Mode() fs.FileMode  { return f.mode }
func (f fakeInfo) ModTime() time.Time { return time.Time{} }
func (f fakeInfo) IsDir() bool        { return f.mode.IsDir() }
func (f fakeInfo) Sys() any           { return f.sys }

func archive() Decision            { return Decision{Action: Archive} }
func skip(k Kind) Decision         { return Decision{Action: Skip, Kind: k} }
func exclude(rule string) Decision { return Decision{Action: Exclude, Rule: rule} }

func mustParse(t *testing.T, patterns ...string) *Matcher {
	t.Helper()
	m, err := ParsePatterns(patterns)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
