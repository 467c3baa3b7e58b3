package main

import (
	"path/filepath"
	"testing"
)

func TestBeforeStateName(t *testing.T) {
	cwd := t.TempDir()
	t.Chdir(cwd)
	for _, tt := range []struct{ dest, want string }{
		{"/srv/www", "www-before-restore"},
		{"/srv/www/", "www-before-restore"},
		{"/", "root-before-restore"},
		{"rel/dest", "dest-before-restore"},
		{".", filepath.Base(cwd) + "-before-restore"},
	} {
		t.Run(tt.dest, func(t *testing.T) {
			if got := beforeStateName(tt.dest); got != tt.want {
				t.Errorf("beforeStateName(%q) = %q, want %q", tt.dest, got, tt.want)
			}
		})
	}
}
