package main

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"backup/format"
)

// tamperEntry rewrites the archive at path as someone who knows its format would: the
// entry name gets body (of the same length) instead of its data, deflated, with its CRC-32,
// and the manifest records body's SHA-256 and the SHA-256 of its compressed bytes, so that
// the archive reads and verifies on its own. The receipt keeps its SHA-256 but is given the
// new size, which is all that reuse compared.
func tamperEntry(t *testing.T, path, name, body string) {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	var oldSum, oldRaw, newSum, newRaw string
	for _, f := range zr.File {
		fh := f.FileHeader
		var raw []byte
		switch f.Name {
		case name:
			oldSum, oldRaw = entrySums(t, f)
			raw = compressAs(t, f.Method, []byte(body))
			fh.CRC32, fh.UncompressedSize64 = crc32.ChecksumIEEE([]byte(body)), uint64(len(body))
			newSum, newRaw = hexSum([]byte(body)), hexSum(raw)
		case format.ManifestName:
			m := readEntry(t, f)
			if oldSum == "" || !bytes.Contains(m, []byte(oldRaw)) {
				t.Fatalf("%s: the manifest does not follow %s or does not record its raw_sha256", path, name)
			}
			m = bytes.Replace(m, []byte(`"sha256":"`+oldSum), []byte(`"sha256":"`+newSum), 1)
			m = bytes.Replace(m, []byte(oldRaw), []byte(newRaw), 1)
			raw = compressAs(t, f.Method, m)
			fh.CRC32, fh.UncompressedSize64 = crc32.ChecksumIEEE(m), uint64(len(m))
		default:
			raw = rawOf(t, f)
		}
		fh.CompressedSize64 = uint64(len(raw))
		w, err := zw.CreateRaw(&fh)
		if err == nil {
			_, err = w.Write(raw)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	setReceiptSize(t, path+".receipt.json", int64(buf.Len()))
}

// setReceiptSize edits the archive size the receipt at path records, and nothing else.
func setReceiptSize(t *testing.T, path string, size int64) {
	t.Helper()
	editReceipt(t, path, func(rc map[string]any) { rc["archive"].(map[string]any)["size"] = size })
}

func entrySums(t *testing.T, f *zip.File) (sum, raw string) {
	t.Helper()
	return hexSum(readEntry(t, f)), hexSum(rawOf(t, f))
}

func readEntry(t *testing.T, f *zip.File) []byte {
	t.Helper()
	rc, err := f.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func rawOf(t *testing.T, f *zip.File) []byte {
	t.Helper()
	r, err := f.OpenRaw()
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// compressAs compresses data as method does: stored or deflated.
func compressAs(t *testing.T, method uint16, data []byte) []byte {
	t.Helper()
	if method == zip.Store {
		return data
	}
	var buf bytes.Buffer
	fw, err := flate.NewWriter(&buf, flate.DefaultCompression)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func hexSum(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// contentIn is the content of the entry name of the archive at path.
func contentIn(t *testing.T, path, name string) string {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		if f.Name == name {
			return string(readEntry(t, f))
		}
	}
	t.Fatalf("%s holds no %s", path, name)
	return ""
}

// TestReuseTamperedReference: LATEST's archive edited so that an entry holds other bytes
// and the manifest agrees with them (CRC-32, sha256 and raw_sha256 all made to match, the
// receipt's size too, but not its SHA-256): the next run copies nothing from it, says so in
// one line, and is complete; its archive holds the file as it is on disk.
func TestReuseTamperedReference(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	reuseTree(t, dir)
	set := filepath.Join(dir, "set")
	r, first := setRun(t, dir, set, "-q")
	mustExit(t, r, exitComplete)
	tamperEntry(t, first, "app/b.txt", "X\n")
	if got := contentIn(t, first, "app/b.txt"); got != "X\n" { // and the edit reads
		t.Fatalf("the edited reference holds %q", got)
	}
	r, second := setRun(t, dir, set)
	mustExit(t, r, exitComplete)
	if first == second {
		t.Fatal("the run did not move LATEST")
	}
	if got := reusedIn(t, second); got != 0 {
		t.Errorf("%d entries reused from a reference that does not hash to its receipt's SHA-256", got)
	}
	if got := contentIn(t, second, "app/b.txt"); got != "b\n" {
		t.Errorf("app/b.txt holds %q, want the file's own \"b\\n\"", got)
	}
	want := "backup: reading every file: no unchanged entry is copied: " + first + ": its SHA-256 is not the one its receipt records\n"
	if n := strings.Count(r.stderr, "reading every file"); n != 1 || !strings.Contains(r.stderr, want) {
		t.Errorf("stderr:\n%s\nwant one line %q", r.stderr, want)
	}
	mustExit(t, backup(t, runOpts{}, "verify", "-q", second), exitComplete)
	// The same reference named by --reference, outside the set.
	out := filepath.Join(dir, "out.zip")
	r = backup(t, runOpts{dir: dir}, "create", "--reference", first, "-o", out, "app")
	mustExit(t, r, exitComplete)
	if got := reusedIn(t, out); got != 0 || !strings.Contains(r.stderr, want) {
		t.Errorf("--reference: %d reused, stderr:\n%s\nwant 0 and the line %q", got, r.stderr, want)
	}
}

// TestReuseIncompleteReferenceEditedComplete: an incomplete backup whose receipt was edited
// to say complete (its SHA-256 left as it was, so the archive hashes to it) is no reference:
// the manifest inside the archive, which the hash proves, says incomplete.
func TestReuseIncompleteReferenceEditedComplete(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	reuseTree(t, dir)
	if err := os.WriteFile(filepath.Join(dir, "app", "corrupt.db"), []byte("SQLite format 3\x00"+strings.Repeat("\xff", 4000)), 0o644); err != nil {
		t.Fatal(err)
	}
	ref := filepath.Join(dir, "ref.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", ref, "app"), exitIncomplete)
	editReceipt(t, ref+".receipt.json", func(rc map[string]any) { rc["status"] = "complete" })
	out := filepath.Join(dir, "out.zip")
	r := backup(t, runOpts{dir: dir}, "create", "--reference", ref, "-o", out, "app")
	mustExit(t, r, exitIncomplete)
	if got := reusedIn(t, out); got != 0 {
		t.Errorf("%d entries reused from an incomplete backup", got)
	}
	if want := ref + ": its manifest says incomplete; only a complete backup is a reference\n"; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr:\n%s\nwant a line ending %q", r.stderr, want)
	}
}

// mountCoarseExt4 mounts a small ext4 with 128-byte inodes, whose timestamps have whole
// seconds only (as ext3, HFS+ and many network and FUSE file systems), at dir.
func mountCoarseExt4(t *testing.T, dir string) {
	t.Helper()
	mustRoot(t)
	mustTool(t, "mkfs.ext4")
	img := filepath.Join(t.TempDir(), "img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 16<<20); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mkfs.ext4", "-q", "-I", "128", img).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4: %v\n%s", err, out)
	}
	if out, err := exec.Command("mount", "-o", "loop", img, dir).CombinedOutput(); err != nil {
		t.Skipf("cannot loop-mount: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
}

// TestAttackReuseRacyCleanFile: a set's run copies a file's entry from the last backup
// when its size, mtime, ctime, inode and mode are those the last backup recorded. On a file
// system whose timestamps have whole seconds, a file rewritten in place (same size) within
// the second in which the last backup read it keeps all five: the next run copies the old
// content, says complete, and so does every run after it until the file's metadata moves
// again. The new content is in no backup, and nothing says so. (Git calls such entries
// "racily clean" and checks them again; borg does not trust a file whose mtime is too
// recent; with nanosecond timestamps the same window is the kernel's clock tick.)
// Correct: an entry whose mtime or ctime is not strictly before the reference run's start, at
// the file system's granularity, is not trusted as unchanged: the file is read again.
func TestAttackReuseRacyCleanFile(t *testing.T) {
	t.Parallel()
	mustTool(t, "unzip")
	dir := t.TempDir()
	mnt := filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	mountCoarseExt4(t, mnt)
	app := filepath.Join(mnt, "app")
	f := filepath.Join(app, "f")
	if err := os.Mkdir(app, 0o755); err != nil {
		t.Fatal(err)
	}
	set := filepath.Join(dir, "set")
	stamp := func() string {
		var st unix.Stat_t
		if err := unix.Stat(f, &st); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(st.Mtim, st.Ctim, st.Ino, st.Size)
	}
	same := false
	for try := 0; try < 5 && !same; try++ {
		os.RemoveAll(set)
		time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 10*time.Millisecond)))
		if err := os.WriteFile(f, []byte("old content\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		before := stamp()
		mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, app), exitComplete)
		if err := os.WriteFile(f, []byte("NEW CONTENT\n"), 0o644); err != nil { // in place, same size
			t.Fatal(err)
		}
		same = stamp() == before
	}
	if !same {
		t.Skip("could not run and rewrite within one second")
	}
	time.Sleep(1100 * time.Millisecond)
	r := backup(t, runOpts{dir: dir}, "create", "--output-dir", set, app)
	mustExit(t, r, exitComplete)
	got, err := exec.Command("unzip", "-p", filepath.Join(set, readLatest(t, set)), "app/f").Output()
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "NEW CONTENT\n" {
		t.Errorf("the file holds %q; the complete backup LATEST names holds %q, copied from the last backup:\n%s",
			"NEW CONTENT\n", got, r.stderr)
	}
}

// TestAttackReferenceDamageSkipsReadBack: a set's read-back does not inflate the entries a
// run copied from its reference, on the ground (docs/reuse.md) that they equal the
// reference's bytes, "whose own read-back inflated them". That holds for LATEST's archive,
// not for an archive given with --reference, which may never have been read back (create
// -o without --verify). Here the reference's app/big is damaged (CRC-32 mismatch; its receipt
// records the damaged bytes, as when they went bad before they were hashed, or a receipt
// rewritten): backup verify rejects it. A set run with --reference copies the damaged entry,
// its read-back passes, it says complete (exit 0) and moves LATEST to an archive that backup
// verify rejects.
// Correct: an entry copied from a reference that was not read back by this tool (or any
// copied entry) is inflated and checked against its CRC-32 and SHA-256 before LATEST may
// name the new archive, or the damaged entry is read from the file instead.
func TestAttackReferenceDamageSkipsReadBack(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var big strings.Builder
	for i := range 30000 {
		fmt.Fprintf(&big, "%d\n", i)
	}
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"big": {content: big.String()}, "a": {content: "a\n"}})
	ref := filepath.Join(dir, "ref.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-o", ref, "app"), exitComplete)

	zr, err := zip.OpenReader(ref)
	if err != nil {
		t.Fatal(err)
	}
	var off, size int64
	for _, f := range zr.File {
		if f.Name == "app/big" {
			off, _ = f.DataOffset()
			size = int64(f.CompressedSize64)
		}
	}
	zr.Close()
	data, err := os.ReadFile(ref)
	if err != nil {
		t.Fatal(err)
	}
	data[off+size/2] ^= 0x55
	if err := os.WriteFile(ref, data, 0o600); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	editReceipt(t, ref+".receipt.json", func(rc map[string]any) {
		a := rc["archive"].(map[string]any)
		a["sha256"], a["size"] = hex.EncodeToString(sum[:]), len(data)
	})
	if r := backup(t, runOpts{}, "verify", ref); r.code == exitComplete {
		t.Fatal("the damaged reference verifies; the test needs it damaged")
	}

	set := filepath.Join(dir, "set")
	r := backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "--reference", ref, "app")
	if r.code == exitComplete {
		if v := backup(t, runOpts{}, "verify", set); v.code != exitComplete {
			t.Errorf("create said complete and moved LATEST to %s, which backup verify rejects:\n%s%s%s", readLatest(t, set), r.stderr, v.stdout, v.stderr)
		}
	}
}
