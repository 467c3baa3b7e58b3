package skiprules

import (
	"os"
	"path/filepath"
	"testing"
)

const validTag = "Signature: 8a477f597d28d172789f06886806bc55\n" +
	"# This file is a cache directory tag.\n"

func TestIsCacheDir(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  bool
	}{
		{"valid tag", writeTag(validTag), true},
		{"signature alone", writeTag(cacheDirSignature), true},
		{"signature then anything", writeTag(cacheDirSignature + "garbage"), true},
		{"bad signature", writeTag("Signature: 0000000000000000000000000000000\n"), false},
		{"signature not at start", writeTag("\n" + validTag), false},
		{"signature cut short", writeTag(cacheDirSignature[:20]), false},
		{"signature wrong case", writeTag("signature: 8a477f597d28d172789f06886806bc55"), false},
		{"empty tag", writeTag(""), false},
		{"missing tag", func(*testing.T, string) {}, false},
		{"tag is a directory", func(t *testing.T, dir string) {
			t.Helper()
			if err := os.Mkdir(filepath.Join(dir, CacheDirTagName), 0o755); err != nil {
				t.Fatal(err)
			}
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.setup(t, dir)
			if got := IsCacheDir(dir); got != tt.want {
				t.Errorf("IsCacheDir = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestIsCacheDirMissingDir(t *testing.T) {
	if IsCacheDir(filepath.Join(t.TempDir(), "nope")) {
		t.Error("IsCacheDir(missing dir) = true, want false")
	}
}

// writeTag returns a setup that writes content as dir's CACHEDIR.TAG.
func writeTag(content string) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, CacheDirTagName), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
