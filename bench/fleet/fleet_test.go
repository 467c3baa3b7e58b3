package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"backup/backupset/s3store/s3test"
)

// TestFleet runs the simulation small: 12 hosts, 3 rounds of 3 seconds, a tenth of the runs
// killed mid-upload (at least one before the last round and one in it), prune and sets
// beside them, and every assertion of the full run (make fleet: 200 hosts) must hold.
func TestFleet(t *testing.T) {
	cfg := config{versitygw: s3test.Binary(t), hosts: 12, rounds: 3, period: 3 * time.Second, killRate: 0.1, files: 20,
		seed: uint64(time.Now().UnixNano()), work: t.TempDir()}
	cfg.bin = filepath.Join(t.TempDir(), "backup")
	build := exec.Command("go", "build", "-o", cfg.bin, "backup")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		t.Fatalf("building backup: %v", err)
	}
	var out strings.Builder
	failed, err := runFleet(t.Context(), cfg, &out)
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	if failed {
		t.Fatalf("an assertion failed (seed %d)", cfg.seed)
	}
}
