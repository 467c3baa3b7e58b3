package main

import (
	bin "encoding/binary"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Attack pass 13: the fixes to verify's local-header checks (archive/localmeta.go,
// coverage.go, overlap.go) and to restore.

// rawEntry is one stored entry of a zip written byte by byte: its local and central extra
// fields may differ, as other tools' do.
type rawEntry struct {
	name               string
	data               string
	localExtra, cExtra []byte
}

// rawZip writes a zip of stored entries, each a regular file of mode 0644 made on Unix,
// dated 2025-01-01 00:00 in MS-DOS time.
func rawZip(t *testing.T, path string, entries []rawEntry) {
	t.Helper()
	le16 := bin.LittleEndian.AppendUint16
	le32 := bin.LittleEndian.AppendUint32
	var out, cd []byte
	const dosTime, dosDate = 0, 0x5a21
	for _, e := range entries {
		crc := crc32.ChecksumIEEE([]byte(e.data))
		off := uint32(len(out))
		out = le32(out, 0x04034b50)
		out = le16(le16(le16(le16(le16(out, 10), 0), 0), dosTime), dosDate)
		out = le32(le32(le32(out, crc), uint32(len(e.data))), uint32(len(e.data)))
		out = le16(le16(out, uint16(len(e.name))), uint16(len(e.localExtra)))
		out = append(append(append(out, e.name...), e.localExtra...), e.data...)
		cd = le32(cd, 0x02014b50)
		cd = le16(le16(le16(le16(le16(le16(cd, 0x031e), 10), 0), 0), dosTime), dosDate)
		cd = le32(le32(le32(cd, crc), uint32(len(e.data))), uint32(len(e.data)))
		cd = le16(le16(le16(le16(le16(cd, uint16(len(e.name))), uint16(len(e.cExtra))), 0), 0), 0)
		cd = le32(le32(cd, 0o100644<<16), off)
		cd = append(append(cd, e.name...), e.cExtra...)
	}
	end := le32(nil, 0x06054b50)
	end = le16(le16(le16(le16(end, 0), 0), uint16(len(entries))), uint16(len(entries)))
	end = le16(le32(le32(end, uint32(len(cd))), uint32(len(out))), 0)
	if err := os.WriteFile(path, append(append(out, cd...), end...), 0o644); err != nil {
		t.Fatal(err)
	}
}

// extraField is one field of a zip extra block.
func extraField(id uint16, data []byte) []byte {
	b := bin.LittleEndian.AppendUint16(nil, id)
	b = bin.LittleEndian.AppendUint16(b, uint16(len(data)))
	return append(b, data...)
}

// TestAttack13VerifyRejectsZip2UnixField: Info-ZIP zip 2.x (the zip of every Unix before
// 2008, still what many old archives hold) writes its "Ux" field (0x7855) with the uid and
// gid in the local header and, as Info-ZIP's extrafld.txt specifies, EMPTY in the central
// header ("the central-header version has no data: it only flags that the local header
// holds UID/GID"). The old "UX" field (0x5855) likewise has atime, mtime, uid, gid locally
// and only the two times centrally. The new local-header owner check reads both fields in
// the local header but only "ux" in the central record, so it calls each such sound
// archive damaged ("local header gives owner 1000:1000, the central directory none"),
// exit 1, and restore refuses to write its files, while unzip -t and bsdtar read it.
// Correct: a Ux/UX field whose central version holds no owner by specification is not a
// disagreement (compare only owners both records can hold, or take the central owner of
// these fields from the local one as unzip does), so verify exits 0 and restore writes it.
func TestAttack13VerifyRejectsZip2UnixField(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ids := bin.LittleEndian.AppendUint16(bin.LittleEndian.AppendUint16(nil, 1000), 1000)
	now := uint32(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Unix())
	times := bin.LittleEndian.AppendUint32(bin.LittleEndian.AppendUint32(nil, now), now)
	for name, e := range map[string]rawEntry{
		"Ux": {name: "a.txt", data: "hello\n", localExtra: extraField(0x7855, ids), cExtra: extraField(0x7855, nil)},
		"UX": {name: "a.txt", data: "hello\n", localExtra: extraField(0x5855, append(times, ids...)), cExtra: extraField(0x5855, times)},
	} {
		arch := filepath.Join(dir, name+".zip")
		rawZip(t, arch, []rawEntry{e})
		if out, err := exec.Command("unzip", "-tq", arch).CombinedOutput(); err != nil {
			t.Fatalf("unzip -t %s: %v %s", name, err, out)
		}
		if r := backup(t, runOpts{dir: dir}, "verify", arch); r.code != exitComplete {
			t.Errorf("verify of a zip 2.x archive with its %s field: exit %d, %s; want 0 (a sound archive)", name, r.code, r.stderr+r.stdout)
		}
		dest := filepath.Join(dir, "dest-"+name)
		r := backup(t, runOpts{dir: dir}, "restore", arch, dest)
		if _, err := os.Stat(filepath.Join(dest, "a.txt")); r.code != exitComplete || err != nil {
			t.Errorf("restore of a zip 2.x archive with its %s field: exit %d, %s, a.txt: %v; want 0 and a.txt written", name, r.code, r.stderr, err)
		}
	}
}

// TestAttack13VerifyRejectsJarDirectory: `jar cf` (the JDK's own tool; every .jar built
// without -M) writes its first entry, META-INF/, deflated: the empty deflate stream, 2
// bytes of compressed data for 0 bytes. unzip -t, Python, Go's archive/zip and bsdtar read
// it; verify calls it "damaged: not a valid zip entry, or more data than its header
// declares" (exit 1) because a directory entry's compressed size is not 0, and restore
// lists it as damaged. Correct: a folder entry whose data inflate to 0 bytes with CRC 0 is
// sound: verify exits 0.
func TestAttack13VerifyRejectsJarDirectory(t *testing.T) {
	t.Parallel()
	jar, err := exec.LookPath("jar")
	if err != nil {
		t.Skip("no jar")
	}
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "d"), map[string]node{"a.txt": {content: "hello\n"}})
	arch := filepath.Join(dir, "a.jar")
	cmd := exec.Command(jar, "cf", arch, "d")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("jar: %v %s", err, out)
	}
	if out, err := exec.Command("unzip", "-tq", arch).CombinedOutput(); err != nil {
		t.Fatalf("unzip -t: %v %s", err, out)
	}
	if r := backup(t, runOpts{dir: dir}, "verify", arch); r.code != exitComplete {
		t.Errorf("verify of jar cf's archive: exit %d, %s; want 0", r.code, r.stderr+r.stdout)
	}
}

// TestAttack13VerifyMissesPKWareUnixOwner: the local header of a.txt holds PKWARE's Unix
// extra field (0x000d: atime, mtime, uid, gid), which Info-ZIP unzip reads: `unzip -X`
// restores a.txt owned by 1234:1234 and dated from that field's mtime (2030), while the
// central record gives no owner and the MS-DOS time 2025-01-01. Verify, whose new check is
// that "a local header must give what extractors restore from it as the central record
// does: the owner ... and the modification time", passes it (exit 0): 0x000d is not one of
// the fields it reads. Correct: the owner and mtime of a local 0x000d field count as the
// ux/UX/Ux ones do, so verify reports a.txt damaged (exit 1).
func TestAttack13VerifyMissesPKWareUnixOwner(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := t.TempDir()
	when := uint32(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).Unix())
	f := bin.LittleEndian.AppendUint32(bin.LittleEndian.AppendUint32(nil, when), when)
	f = bin.LittleEndian.AppendUint16(bin.LittleEndian.AppendUint16(f, 1234), 1234)
	arch := filepath.Join(dir, "pk.zip")
	rawZip(t, arch, []rawEntry{{name: "a.txt", data: "hello\n", localExtra: extraField(0x000d, f)}})
	// What unzip -X restores from it.
	x := filepath.Join(dir, "x")
	os.Mkdir(x, 0o755)
	cmd := exec.Command("unzip", "-qX", arch)
	cmd.Dir = x
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("unzip -X: %v %s", err, out)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(x, "a.txt"), &st); err != nil {
		t.Fatal(err)
	}
	t.Logf("unzip -X restored a.txt as %d:%d, mtime %s", st.Uid, st.Gid, time.Unix(st.Mtim.Sec, 0).UTC())
	if r := backup(t, runOpts{dir: dir}, "verify", arch); r.code != exitFailed || !strings.Contains(r.stdout+r.stderr, "a.txt: damaged") {
		t.Errorf("verify of an entry whose local header gives unzip owner %d:%d and another mtime than its central record: exit %d, %s; want 1, a.txt damaged", st.Uid, st.Gid, r.code, r.stdout+r.stderr)
	}
}

// TestAttack13PresentRootOwnedNotGivenOwner: root restores with --no-same-owner (every file
// root's), then runs the same restore again to give the files their recorded owners, as
// docs/restore.md says a re-run does ("only its owner, mode and mtime are set where they
// differ"). app/f is root's, mode 0644: no user but root (the restoring user) can write to
// it, so nobody could rewrite it between the check of its bytes and the chown. Yet the
// re-run warns "another user than its recorded owner may write to it" (false: only root
// can), leaves it root's, and exits 0; only --force, which rewrites every such file, gives
// owners. The same for any tree root copied in (cp -r, rsync without -o). Correct: a file
// that only root (the restoring user) or its recorded owner can write is given its owner
// in place, without a warning: the re-run makes app/f 1000:1000.
func TestAttack13PresentRootOwnedNotGivenOwner(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"f": {content: "hi\n"}})
	os.Chown(filepath.Join(dir, "src/app/f"), 1000, 1000)
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "-q", "--no-same-owner", "--numeric-owner", arch, dest), exitComplete)
	r := backup(t, runOpts{dir: dir}, "restore", "--numeric-owner", arch, dest)
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(dest, "app/f"), &st); err != nil {
		t.Fatal(err)
	}
	if r.code != exitComplete || strings.Contains(r.stderr, "warning") || st.Uid != 1000 {
		t.Errorf("re-run as root over its own root-owned 0644 copy: exit %d, uid %d, stderr %q; want 0, uid 1000, no warning", r.code, st.Uid, r.stderr)
	}
}

// TestAttack13PresentSharedGroupFileMtime: a shared project folder (setgid folder, umask
// 002): app/f is recorded as 1000:1000, mode 0664, and DEST holds it with the same bytes,
// owner and mode; only its mtime differs (a checkout touched it). Root's restore changes
// neither owner nor mode, so no setuid program or gift of ownership can come of it, and a
// group member may rewrite the file after the restore as before it; yet it warns "another
// user than its recorded owner may write to it" and does not set the mtime. Correct: when
// the owner is already the recorded one and the mode gains no setuid/setgid bit, the mtime
// is set in place without a warning.
func TestAttack13PresentSharedGroupFileMtime(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"f": {content: "hi\n"}})
	f := filepath.Join(dir, "src/app/f")
	os.Chown(f, 1000, 1000)
	os.Chmod(f, 0o664)
	old := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	os.Chtimes(f, old, old)
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	os.MkdirAll(filepath.Join(dest, "app"), 0o2775)
	os.Chmod(filepath.Join(dest, "app"), 0o2775)
	g := filepath.Join(dest, "app/f")
	os.WriteFile(g, []byte("hi\n"), 0o664)
	os.Chmod(g, 0o664)
	os.Chown(g, 1000, 1000)
	r := backup(t, runOpts{dir: dir}, "restore", "--numeric-owner", arch, dest)
	info, err := os.Stat(g)
	if err != nil {
		t.Fatal(err)
	}
	if r.code != exitComplete || strings.Contains(r.stderr, "warning") || !info.ModTime().Equal(old) {
		t.Errorf("restore of a group-writable file with its recorded owner and mode: exit %d, mtime %s, stderr %q; want 0, mtime %s, no warning", r.code, info.ModTime().UTC(), r.stderr, old)
	}
}

// TestAttack13VerifyRejectsZip64DescriptorOfEmptyFile: Python's zipfile, writing to a pipe
// (no seek) an entry opened with force_zip64=True (as it does for any entry it cannot size
// beforehand and is told may be large), follows the data with a zip64 data descriptor:
// signature, CRC-32, and 8-byte sizes. For an empty file those are 24 bytes whose first 16
// also read as a descriptor with 4-byte sizes (CRC 0, sizes 0, 0), the form
// checkDescriptor tries first: verify then thinks the entry ends 8 bytes early and
// reports the next entry "damaged: 8 bytes before its local header that no entry covers"
// (exit 1), while unzip -t, Python and Go read the archive. Correct: a descriptor form is
// taken only where the next entry (or the central directory) starts after it, or the
// 8-byte form when the local header has a zip64 field, as Info-ZIP does: verify exits 0.
func TestAttack13VerifyRejectsZip64DescriptorOfEmptyFile(t *testing.T) {
	t.Parallel()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	dir := t.TempDir()
	arch := filepath.Join(dir, "py.zip")
	script := `
import zipfile, io, sys
class Pipe(io.RawIOBase):
    def __init__(s): s.b = bytearray()
    def writable(s): return True
    def write(s, b): s.b += b; return len(b)
p = Pipe()
with zipfile.ZipFile(p, 'w', zipfile.ZIP_DEFLATED) as z:
    with z.open('empty', 'w', force_zip64=True) as w: pass
    with z.open('b.txt', 'w') as w: w.write(b'abc')
open(sys.argv[1], 'wb').write(p.b)
`
	if out, err := exec.Command(py, "-c", script, arch).CombinedOutput(); err != nil {
		t.Fatalf("python3: %v %s", err, out)
	}
	if out, err := exec.Command("unzip", "-tq", arch).CombinedOutput(); err != nil {
		t.Fatalf("unzip -t: %v %s", err, out)
	}
	if r := backup(t, runOpts{dir: dir}, "verify", arch); r.code != exitComplete {
		t.Errorf("verify of Python's streamed zip64 archive with an empty file: exit %d, %s; want 0", r.code, r.stdout+r.stderr)
	}
}

// TestAttack13PresentOwnerRewritesBeforeSetgid: the in-place check trusts a file's recorded
// owner to write to it, which is harmless for its owner's own setuid bit but not for a
// group the owner is not in. The archive holds app/tool recorded as nobody:root (gid 0),
// mode 02755 (setgid root's group); DEST holds the same bytes as nobody:nobody 0755.
// nobody keeps it open for writing, and writes other bytes (same length) while root's
// restore --same-permissions --numeric-owner is held at its fchown (after the plan hashed
// the file). The file is nobody's, as recorded, and no group or other may write, so
// inPlaceRisk allows it: the restore then gives it gid 0 and 02755, says it was "already
// there", and exits 0. The result: a setgid-root-group program with nobody's bytes (read
// /etc/shadow-like root:0640 files, write group-0 files): a privilege escalation. Correct:
// a setgid bit (or a group) is not given in place to a file that a user outside that group
// may write (treat the owner as "another user" when the recorded gid differs from the
// file's and the mode to give is setgid), or the bytes are checked again after the chmod.
func TestAttack13PresentOwnerRewritesBeforeSetgid(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "strace")
	dir := sharedTempDir(t)
	const good, evil = "#!/bin/sh\necho good\n", "#!/bin/sh\necho EVIL\n" // same length
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"tool": {content: good}})
	os.Chown(filepath.Join(dir, "src/app/tool"), nobody, 0)
	syscall.Chmod(filepath.Join(dir, "src/app/tool"), 0o2755)
	arch := filepath.Join(dir, "t.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	tool := filepath.Join(dest, "app/tool")
	os.MkdirAll(filepath.Join(dest, "app"), 0o755)
	os.WriteFile(tool, []byte(good), 0o755)
	os.Chown(tool, nobody, nobody)
	log := filepath.Join(dir, "strace.log")
	attacker := exec.Command("bash", "-c", `exec 3<>"$1"; for i in $(seq 3000); do grep -q "fchown(" "$2" 2>/dev/null && break; sleep 0.005; done; printf "$3" >&3`,
		"attacker", tool, log, evil)
	attacker.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	if err := attacker.Start(); err != nil {
		t.Fatal(err)
	}
	waitForPath("/proc/" + strconv.Itoa(attacker.Process.Pid) + "/fd/3")
	cmd := exec.Command("strace", "-f", "-o", log, "-e", "trace=fchown", "-e", "inject=fchown:delay_enter=1500000:when=1",
		binary, "restore", "--same-permissions", "--numeric-owner", "--jobs", "1", arch, dest)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.Run()
	attacker.Wait()
	b, _ := os.ReadFile(tool)
	var st syscall.Stat_t
	if err := syscall.Stat(tool, &st); err != nil {
		t.Fatal(err)
	}
	if string(b) != good && st.Gid == 0 && st.Mode&syscall.S_ISGID != 0 {
		t.Errorf("app/tool is setgid root's group (%d:%d, mode %o) with nobody's bytes %q; restore exit %d:\n%s", st.Uid, st.Gid, st.Mode&0o7777, b, cmd.ProcessState.ExitCode(), stderr.String())
	}
}

// TestAttack13VerifyMissesTruncatedUxOwner: a.txt's local header holds a ux field cut
// short in its gid (uid of 4 bytes = 1234, then a gid size of 4 with only 2 bytes left);
// the central record has no owner. Verify's local reader drops the whole field as no
// owner, so the local header "agrees" and verify exits 0; but `unzip -X` restores a.txt as
// uid 1234 (gid read past the field) and `bsdtar -p` as 1234:0: the local header gives
// them an owner the central directory does not. Correct: a ux field that gives a uid, or
// any ux/UX/Ux field that cannot be read whole, in a local header whose central record
// has none (or another), is damage: verify exits 1 with a.txt damaged.
func TestAttack13VerifyMissesTruncatedUxOwner(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := t.TempDir()
	ux := append([]byte{1, 4}, bin.LittleEndian.AppendUint32(nil, 1234)...)
	ux = append(ux, 4, 0, 0)
	arch := filepath.Join(dir, "t.zip")
	rawZip(t, arch, []rawEntry{{name: "a.txt", data: "hello\n", localExtra: extraField(0x7875, ux)}})
	x := filepath.Join(dir, "x")
	os.Mkdir(x, 0o755)
	cmd := exec.Command("unzip", "-qX", arch)
	cmd.Dir = x
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("unzip -X: %v %s", err, out)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(x, "a.txt"), &st); err != nil {
		t.Fatal(err)
	}
	if r := backup(t, runOpts{dir: dir}, "verify", arch); r.code != exitFailed {
		t.Errorf("verify of a local header whose cut ux field gives unzip -X uid %d (central: no owner): exit %d, %s; want 1, a.txt damaged", st.Uid, r.code, r.stdout+r.stderr)
	}
}

// TestAttack13VerifyMissesSecondDirectoryInZip64End: a backup archive of app/a.txt
// ("good") has bytes spliced between its central directory and its end record: a local
// entry app/a.txt with other bytes ("EVIL!"), a central directory that lists only it, a
// zip64 end record pointing at that directory, and a zip64 locator. The classic end
// record is left as it was (no field maxed out), so backup (and Go) read the first
// directory; Python's zipfile and libarchive (bsdtar on a file) take the zip64 end record
// whenever its locator precedes the end record, and read the second: `bsdtar -xOf` and
// `zipfile.read` give "EVIL!". Verify, whose new check is that the entries lie end to end
// up to the central directory so that no other tool finds an entry it does not list,
// passes it (exit 0): the bytes after the directory it read, up to the end record, are
// never looked at. Correct: the central directory must end where the end records start
// (a zip64 end record and locator where present, and they must agree with the classic
// one): verify exits 1.
func TestAttack13VerifyMissesSecondDirectoryInZip64End(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"a.txt": {content: "good\n"}})
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	b, err := os.ReadFile(arch)
	if err != nil {
		t.Fatal(err)
	}
	eocd := len(b) - 22
	if bin.LittleEndian.Uint32(b[eocd:]) != 0x06054b50 {
		t.Fatal("end record not at the end")
	}
	le16 := bin.LittleEndian.AppendUint16
	le32 := bin.LittleEndian.AppendUint32
	le64 := bin.LittleEndian.AppendUint64
	const evil = "EVIL!"
	name := "app/a.txt"
	crc := crc32.ChecksumIEEE([]byte(evil))
	h := uint64(eocd)
	var add []byte
	add = le32(add, 0x04034b50)
	add = le16(le16(le16(le16(le16(add, 10), 0), 0), 0), 0x5a21)
	add = le32(le32(le32(add, crc), uint32(len(evil))), uint32(len(evil)))
	add = le16(le16(add, uint16(len(name))), 0)
	add = append(append(add, name...), evil...)
	cdB := uint64(eocd + len(add))
	var cd []byte
	cd = le32(cd, 0x02014b50)
	cd = le16(le16(le16(le16(le16(le16(cd, 0x031e), 10), 0), 0), 0), 0x5a21)
	cd = le32(le32(le32(cd, crc), uint32(len(evil))), uint32(len(evil)))
	cd = le16(le16(le16(le16(le16(cd, uint16(len(name))), 0), 0), 0), 0)
	cd = le32(le32(cd, 0o100644<<16), uint32(h))
	cd = append(cd, name...)
	add = append(add, cd...)
	z64 := uint64(eocd + len(add))
	add = le32(add, 0x06064b50)
	add = le64(add, 44)
	add = le16(le16(add, 45), 45)
	add = le32(le32(add, 0), 0)
	add = le64(le64(le64(le64(add, 1), 1), uint64(len(cd))), cdB)
	add = le32(le32(add, 0x07064b50), 0)
	add = le32(le64(add, z64), 1)
	spliced := append(append(append([]byte{}, b[:eocd]...), add...), b[eocd:]...)
	if err := os.WriteFile(arch, spliced, 0o644); err != nil {
		t.Fatal(err)
	}
	// The archive alone, as when it is copied somewhere or handed on (its receipt, which
	// records its size, is optional to verify).
	os.Remove(arch + ".receipt.json")
	if out, err := exec.Command("bsdtar", "-xOf", arch, name).Output(); err == nil {
		t.Logf("bsdtar -xOf reads %s as %q", name, out)
	}
	if py, err := exec.LookPath("python3"); err == nil {
		out, _ := exec.Command(py, "-c", "import zipfile,sys; print(zipfile.ZipFile(sys.argv[1]).namelist(), zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))", arch, name).CombinedOutput()
		t.Logf("python zipfile reads %s", out)
	}
	r := backup(t, runOpts{dir: dir}, "verify", arch)
	t.Logf("verify: exit %d %s", r.code, r.stdout+r.stderr)
	if r.code != exitFailed {
		t.Errorf("verify of an archive whose zip64 end record names a second directory (another %s): exit %d, %s; want 1", name, r.code, r.stdout+r.stderr)
	}
}

// TestAttack13LinkAnchorInodeReused: the fix links a hard-link group's members "only to the
// file this run placed" at the anchor's name, comparing device and inode number alone
// (placed.file, statID). On ext4 a freed inode number is handed straight back to the next
// file made. The archive holds app/pub/a and app/sec/b as one hard-link group (root's);
// DEST's app/pub belongs to nobody, app/sec is root's (0755). nobody waits for the restore
// to place app/pub/a, removes it and writes a file of its own there ("EVIL"), which gets
// the same inode number; strace only holds the restore 0.7 s after placing app/sec/b so
// that the swap lands before the relink. The relink then finds "the file this run placed"
// at app/pub/a, links it into root's app/sec as b, and the restore says complete, exit 0,
// no warning: a file nobody owns and may rewrite now sits in a folder only root may write
// (app/sec could be /etc/cron.d). Correct: the anchor is identified by more than its inode
// number (ctime and the birth time, or better a descriptor held open from the write to the
// link, linkat of /proc/self/fd or AT_EMPTY_PATH), so b stays the separate root's file
// this run wrote, with a warning.
func TestAttack13LinkAnchorInodeReused(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "strace")
	dir := sharedTempDir(t)
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"pub/a": {content: "good\n"}})
	os.MkdirAll(filepath.Join(dir, "src/app/sec"), 0o755)
	if err := os.Link(filepath.Join(dir, "src/app/pub/a"), filepath.Join(dir, "src/app/sec/b")); err != nil {
		t.Fatal(err)
	}
	arch := filepath.Join(dir, "t.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	os.MkdirAll(filepath.Join(dest, "app/pub"), 0o755)
	os.MkdirAll(filepath.Join(dest, "app/sec"), 0o755)
	os.Chmod(dest, 0o755)
	os.Chmod(filepath.Join(dest, "app"), 0o755)
	os.Chown(filepath.Join(dest, "app/pub"), nobody, nobody)
	attacker := exec.Command("bash", "-c", `cd "$1" || exit 1; for n in $(seq 10000); do [ -e a ] && break; sleep 0.001; done; rm -f a; echo EVIL > a`,
		"attacker", filepath.Join(dest, "app/pub"))
	attacker.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	if err := attacker.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	cmd := exec.Command("strace", "-f", "-o", "/dev/null", "-e", "trace=renameat2", "-e", "inject=renameat2:delay_exit=700000:when=2",
		binary, "restore", "--jobs", "1", arch, dest)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.Run()
	attacker.Wait()
	b := filepath.Join(dest, "app/sec/b")
	var st syscall.Stat_t
	if err := syscall.Lstat(b, &st); err != nil {
		t.Fatal(err)
	}
	content, _ := os.ReadFile(b)
	if st.Uid == nobody || string(content) != "good\n" {
		t.Errorf("root's app/sec/b is %d:%d with %q (%d names); restore exit %d:\n%s", st.Uid, st.Gid, content, st.Nlink, cmd.ProcessState.ExitCode(), stderr.String())
	}
}
