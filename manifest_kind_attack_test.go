package main

import (
	"archive/zip"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backup/format"
)

// TestAttackManifestOfSpecialMode: a backup whose manifest entry says by its Unix mode that
// it is a symlink (or a FIFO), not the regular file backup writes. unzip and bsdtar
// extract it as a symlink whose target is the JSON text (a FIFO is skipped), so `unzip` and
// `jq` read no manifest; verify said ok, list and restore read it as the manifest, exit 0
// (hostile-archive pass).
func TestAttackManifestOfSpecialMode(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		mode fs.FileMode
		want string
	}{
		{"symlink", fs.ModeSymlink | 0o777, "a symlink entry, not a manifest"},
		{"fifo", fs.ModeNamedPipe | 0o600, "a fifo entry, not a manifest"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			arch := backupOf(t, dir, "a")
			hostile := filepath.Join(dir, "hostile.zip")
			setManifestMode(t, arch, hostile, tt.mode)
			v := backup(t, runOpts{dir: dir}, "verify", hostile)
			want := format.ManifestName + ": " + tt.want
			if v.code != exitFailed || !strings.Contains(v.stderr, want+"\n") {
				t.Errorf("verify: exit %d %q; want %d and %q", v.code, v.stderr, exitFailed, want)
			}
			for _, cmd := range [][]string{{"list", hostile}, {"restore", hostile, filepath.Join(dir, "dest")}} {
				r := backup(t, runOpts{dir: dir}, cmd...)
				line := "backup " + cmd[0] + ": " + hostile + ": " + want + "\n"
				if r.code != exitFailed || r.stderr != line {
					t.Errorf("%s: exit %d %q; want %d and %q", cmd[0], r.code, r.stderr, exitFailed, line)
				}
			}
		})
	}
}

// setManifestMode copies the zip in to out with its manifest entry's Unix mode made mode.
func setManifestMode(t *testing.T, in, out string, mode fs.FileMode) {
	t.Helper()
	zr, err := zip.OpenReader(in)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zw := zip.NewWriter(f)
	for _, e := range zr.File {
		if e.Name == format.ManifestName {
			e.SetMode(mode)
		}
		if err := zw.Copy(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
}
