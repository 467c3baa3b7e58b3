package report

import (
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"backup/archive"
	"backup/format"
	"backup/skiprules"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func TestWarnClassification(t *testing.T) {
	changed := fmt.Errorf("%w (size 1, then 2 bytes; 2 read)", archive.ErrChanged)
	tests := []struct {
		name   string
		policy Policy
		err    error
		op     string
		lost   bool
	}{
		{"open denied", Policy{}, &fs.PathError{Op: "open", Path: "a", Err: syscall.EACCES}, "open", true},
		{"read error", Policy{}, &fs.PathError{Op: "read", Path: "a", Err: syscall.EIO}, "read", true},
		{"readdir", Policy{}, &fs.PathError{Op: "readdir", Path: "a", Err: syscall.EACCES}, "readdir", true},
		{"stat resolved", Policy{}, &fs.PathError{Op: "stat", Path: "a", Err: syscall.EOVERFLOW}, "stat", false},
		{"vanished at stat", Policy{}, &fs.PathError{Op: "stat", Path: "a", Err: syscall.ENOENT}, "vanished", false},
		{"vanished at open", Policy{}, &fs.PathError{Op: "open", Path: "a", Err: syscall.ENOENT}, "vanished", false},
		{"changed", Policy{}, &fs.PathError{Op: "read", Path: "a", Err: changed}, "changed", false},
		{"fail-on vanished", Policy{FailOn: []string{"vanished"}}, &fs.PathError{Op: "open", Path: "a", Err: syscall.ENOENT}, "vanished", true},
		{"fail-on changed", Policy{FailOn: []string{"changed"}}, &fs.PathError{Op: "read", Path: "a", Err: changed}, "changed", true},
		{"fail-on stat", Policy{FailOn: []string{"stat"}}, &fs.PathError{Op: "stat", Path: "a", Err: syscall.EOVERFLOW}, "stat", true},
		{"fail-on other kind", Policy{FailOn: []string{"stat"}}, &fs.PathError{Op: "read", Path: "a", Err: changed}, "changed", false},
		{"xattr unreadable", Policy{}, &fs.PathError{Op: format.OpXattr, Path: "a", Err: syscall.EACCES}, "xattr", true},
		{"strict", Policy{Strict: true}, &fs.PathError{Op: "stat", Path: "a", Err: syscall.ENOENT}, "vanished", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRecorder(tt.policy)
			r.Warn(tt.err)
			w := r.Manifest("v").Warnings[0]
			if w.Op != tt.op || w.Lost != tt.lost || w.Path != "a" {
				t.Errorf("got %+v, want path a, op %s, lost %v", w, tt.op, tt.lost)
			}
			wantStatus := format.Complete
			if tt.lost {
				wantStatus = format.Incomplete
			}
			if got := r.Status(); got != wantStatus {
				t.Errorf("status %s, want %s", got, wantStatus)
			}
		})
	}
}

func file(name, data string) format.File {
	sum := sha256.Sum256([]byte(data))
	return format.File{Path: name, Size: int64(len(data)), SHA256: format.Digest(sum)}
}

// sampleRecorder is a run with one of everything, told in an order other than the sorted one.
func sampleRecorder() *Recorder {
	r := NewRecorder(Policy{})
	r.Dir(format.Dir{Path: "app"})
	r.File(file("app/b.txt", "bbb"))
	r.File(file("app/a.txt", "a"))
	r.Skip("app/run/ctl.sock", skiprules.KindSocket)
	r.Skip("app/link", skiprules.KindSymlink)
	r.Exclude("app/cache", skiprules.RuleCacheDir)
	r.Warn(&fs.PathError{Op: "open", Path: "app/secret", Err: syscall.EACCES})
	r.Warn(&fs.PathError{Op: "open", Path: "app/gone", Err: syscall.ENOENT})
	return r
}

func TestReceiptGolden(t *testing.T) {
	start := time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		run  Run
	}{
		{"incomplete", Run{ToolVersion: "1.2.3", Started: start, Finished: start.Add(4 * time.Second),
			Sources: []string{"/srv/app"}, Archive: &format.ArchiveInfo{Path: "/b/app.zip", Size: 123, SHA256: "ab12"}}},
		{"failed", Run{ToolVersion: "1.2.3", Started: start, Finished: start.Add(time.Second),
			Sources: []string{"/srv/app"}, Err: errors.New("writing archive /b/app.zip: no space left on device")}},
		{"dry-run", Run{ToolVersion: "1.2.3", Started: start, Finished: start, DryRun: true, Sources: []string{"/srv/app"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sampleRecorder().Receipt(tt.run).Marshal()
			if err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata", tt.name+".receipt.json"), got)
		})
	}
}

func TestSummary(t *testing.T) {
	r := sampleRecorder()
	for i := range 25 {
		r.Warn(&fs.PathError{Op: "read", Path: fmt.Sprintf("app/bad%02d", i), Err: syscall.EIO})
	}
	rc := r.Receipt(Run{Archive: &format.ArchiveInfo{Path: "/b/app.zip", Size: 5 << 20}})
	var b strings.Builder
	WriteSummary(&b, rc, "/b/app.zip.receipt.json")
	golden(t, filepath.Join("testdata", "summary.txt"), []byte(b.String()))
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 5 << 30: "5.0 GiB"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs (go test -update rewrites it):\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// TestSnapshotsRecorded marks a file told by Copy as a snapshot in the manifest, counts it
// in the receipt and names it in the summary; other files stay plain.
func TestSnapshotsRecorded(t *testing.T) {
	r := NewRecorder(Policy{})
	src := format.CopySource{Kind: "sqlite", Size: 8192, ModTime: time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)}
	r.Copy("app/state.db", src)
	empty := format.Digest{1}
	r.File(format.File{Path: "app/state.db", Size: 4096, SHA256: empty})
	r.File(format.File{Path: "app/a.txt", Size: 1, SHA256: empty})
	m := r.Manifest("1.2.3")
	for _, f := range m.Files {
		want := f.Path == "app/state.db"
		if got := f.Snapshot != nil && *f.Snapshot == src; got != want {
			t.Errorf("%s: snapshot %+v, want it marked: %v", f.Path, f.Snapshot, want)
		}
	}
	rc := r.Receipt(Run{Archive: &format.ArchiveInfo{Path: "/b/app.zip", Size: 5 << 20}})
	if rc.Counts.Snapshots != 1 {
		t.Errorf("receipt counts %d snapshots, want 1", rc.Counts.Snapshots)
	}
	var b strings.Builder
	WriteSummary(&b, rc, "")
	if want := "backup: complete: 2 files (1 database snapshot), "; !strings.HasPrefix(b.String(), want) {
		t.Errorf("summary %q, want it to start %q", b.String(), want)
	}
}

// TestSummaryReadLeavesReusedOut: the summary's "read" is what the run read from the files;
// the bytes of files copied from the reference were not read (the receipt's counts.bytes
// holds every file's).
func TestSummaryReadLeavesReusedOut(t *testing.T) {
	r := NewRecorder(Policy{})
	r.File(format.File{Path: "app/big", Size: 3 << 20, SHA256: format.Digest{1}, Reused: true})
	r.File(format.File{Path: "app/new", Size: 1 << 20, SHA256: format.Digest{2}})
	rc := r.Receipt(Run{Archive: &format.ArchiveInfo{Path: "/b/app.zip", Size: 1 << 20}})
	if rc.Counts.Bytes != 4<<20 || rc.Counts.ReusedBytes != 3<<20 {
		t.Errorf("counts %+v, want 4 MiB of files, 3 MiB of them reused", rc.Counts)
	}
	var b strings.Builder
	WriteSummary(&b, rc, "")
	if want := "backup: complete: 2 files, 1 reused, 1.0 MiB read, archive 1.0 MiB; "; !strings.HasPrefix(b.String(), want) {
		t.Errorf("summary %q, want it to start %q", b.String(), want)
	}
}
