package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolveArchive(t *testing.T) {
	t.Parallel()
	set, a, _ := twoRunSet(t)
	damaged := filepath.Join(t.TempDir(), "damaged")
	os.Mkdir(damaged, 0o755)
	os.WriteFile(filepath.Join(damaged, "LATEST"), []byte("../etc/passwd\n"), 0o644)
	tests := []struct {
		arg, want, err string
	}{
		{filepath.Join(set, a), filepath.Join(set, a), ""},
		{"missing.zip", "missing.zip", ""},
		{set, filepath.Join(set, a), ""},
		{damaged, "", "/LATEST: names \"../etc/passwd\", which holds a /"},
		{t.TempDir(), "", "no backup in this set yet"},
	}
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			ref, err := resolveArchive(t.Context(), tt.arg, &s3Flags{})
			got := ref.path
			if got != tt.want || (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
				t.Errorf("resolveArchive(%q) = %q, %v; want %q, %q", tt.arg, got, err, tt.want, tt.err)
			}
		})
	}
}
