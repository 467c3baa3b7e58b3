package main

import (
	"archive/zip"
	"bytes"
	le "encoding/binary"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// Attack pass 11 on restore, verify and list. Each test is a finding: it fails on the
// code it was written against, and passes once the defect is fixed.

// a11CentralRecords walks the central directory of the zip b: for each record its offset in
// b, its name and the offset of its local header.
type a11Central struct {
	at, local int
	name      string
}

func a11Centrals(t *testing.T, b []byte) (recs []a11Central, eocd int) {
	t.Helper()
	eocd = bytes.LastIndex(b, []byte("PK\x05\x06"))
	if eocd < 0 {
		t.Fatal("no end record")
	}
	size := int(le.LittleEndian.Uint32(b[eocd+12:]))
	off := int(le.LittleEndian.Uint32(b[eocd+16:]))
	for p := off; p < off+size; {
		n := int(le.LittleEndian.Uint16(b[p+28:]))
		x := int(le.LittleEndian.Uint16(b[p+30:]))
		c := int(le.LittleEndian.Uint16(b[p+32:]))
		recs = append(recs, a11Central{at: p, local: int(le.LittleEndian.Uint32(b[p+42:])), name: string(b[p+46 : p+46+n])})
		p += 46 + n + x + c
	}
	return recs, eocd
}

// a11LocalExtra returns the local header extra field of the entry name in b (a slice of b:
// writing to it edits the archive).
func a11LocalExtra(t *testing.T, b []byte, name string) []byte {
	t.Helper()
	recs, _ := a11Centrals(t, b)
	for _, r := range recs {
		if r.name == name {
			n := int(le.LittleEndian.Uint16(b[r.local+26:]))
			x := int(le.LittleEndian.Uint16(b[r.local+28:]))
			return b[r.local+30+n : r.local+30+n+x]
		}
	}
	t.Fatalf("no entry %q", name)
	return nil
}

// a11InsertLocalOnly inserts, before the local header of the entry before, a whole local
// entry (header and data) of name holding body that the central directory does not list,
// and moves every offset after it.
func a11InsertLocalOnly(t *testing.T, b []byte, before, name, body string) []byte {
	t.Helper()
	var one bytes.Buffer
	zw := zip.NewWriter(&one)
	fh := &zip.FileHeader{Name: name, Method: zip.Store}
	fh.SetMode(0o755)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: name, Method: zip.Store, CRC32: crc32.ChecksumIEEE([]byte(body)),
		CompressedSize64: uint64(len(body)), UncompressedSize64: uint64(len(body)), CreatorVersion: fh.CreatorVersion, ExternalAttrs: fh.ExternalAttrs})
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte(body))
	zw.Close()
	ob := one.Bytes()
	orecs, _ := a11Centrals(t, ob)
	hidden := ob[:orecs[0].at]

	recs, eocd := a11Centrals(t, b)
	at := -1
	for _, r := range recs {
		if r.name == before {
			at = r.local
		}
	}
	if at < 0 {
		t.Fatalf("no entry %q", before)
	}
	out := bytes.Clone(b)
	for _, r := range recs {
		if r.local >= at {
			le.LittleEndian.PutUint32(out[r.at+42:], uint32(r.local+len(hidden)))
		}
	}
	cd := int(le.LittleEndian.Uint32(out[eocd+16:]))
	le.LittleEndian.PutUint32(out[eocd+16:], uint32(cd+len(hidden)))
	return append(append(append([]byte{}, out[:at]...), hidden...), out[at:]...)
}

// TestAttack11VerifyPassesLocalOwnerLie: an archive backup made of a setuid file owned by
// nobody (65534), with only the local header's Info-ZIP "ux" field edited to say uid 0, gid
// 0 (the central directory and the manifest still say 65534). verify reports ok, although
// unzip -X -K and bsdtar -p (which read the owner from the local header) restore it as a
// root-owned setuid file. verify promises that every entry's owner in its ux field is the
// one the manifest records and that the local header agrees with the central directory;
// the correct behaviour is a problem for the entry (exit 1), as for any other field in
// which the two headers disagree.
func TestAttack11VerifyPassesLocalOwnerLie(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"tool": {content: "#!/bin/sh\nid\n"}})
	tool := filepath.Join(dir, "app/tool")
	if err := os.Chown(tool, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	syscall.Chmod(tool, 0o4755)
	arch := filepath.Join(dir, "u.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "app"), exitComplete)
	b, err := os.ReadFile(arch)
	if err != nil {
		t.Fatal(err)
	}
	extra := a11LocalExtra(t, b, "app/tool")
	i := bytes.Index(extra, []byte("ux\x0b\x00\x01\x04"))
	if i < 0 {
		t.Fatalf("no ux field in the local header: %x", extra)
	}
	le.LittleEndian.PutUint32(extra[i+6:], 0)
	le.LittleEndian.PutUint32(extra[i+11:], 0)
	edited := filepath.Join(dir, "edited.zip") // no receipt: the manifest is all there is
	os.WriteFile(edited, b, 0o600)
	r := backup(t, runOpts{dir: dir}, "verify", edited)
	if r.code != exitFailed || !strings.Contains(r.stderr, "app/tool") {
		t.Errorf("verify of an archive whose local header gives app/tool to root: exit %d stdout %q stderr %q; want exit 1 naming app/tool", r.code, r.stdout, r.stderr)
	}
	if _, err := exec.LookPath("bsdtar"); err == nil {
		out := filepath.Join(dir, "bsdtar")
		os.Mkdir(out, 0o755)
		if err := exec.Command("bsdtar", "-xpf", edited, "-C", out).Run(); err == nil {
			var st syscall.Stat_t
			if syscall.Stat(filepath.Join(out, "app/tool"), &st) == nil {
				t.Logf("bsdtar -p restores app/tool as uid %d, mode %o", st.Uid, st.Mode&0o7777)
			}
		}
	}
}

// TestAttack11VerifyPassesHiddenLocalEntry: a whole local entry (header and data,
// app/evil.sh) inserted between two entries of an archive backup made, not listed in the
// central directory, every offset moved to match. verify reports ok (no receipt: the
// manifest is all there is), yet a streaming reader (libarchive's, as `curl … | bsdtar -x`
// uses it, or Java's ZipInputStream) extracts app/evil.sh, a file the manifest does not
// list: the archive means different things to different tools, which is what verify's
// local-header checks exist to catch. The correct behaviour is a problem (exit 1): bytes
// between entries, or between the last entry and the central directory, that no entry
// covers (at least a local header signature there). The same holds for a stored entry
// whose data descriptor a streaming reader finds early (a fake one inside the data).
func TestAttack11VerifyPassesHiddenLocalEntry(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch := backupOf(t, dir, "a")
	b, err := os.ReadFile(arch)
	if err != nil {
		t.Fatal(err)
	}
	edited := filepath.Join(dir, "edited.zip")
	os.WriteFile(edited, a11InsertLocalOnly(t, b, "app/sub/", "app/evil.sh", "#!/bin/sh\nrm -rf ~\n"), 0o600)
	r := backup(t, runOpts{dir: dir}, "verify", edited)
	if r.code != exitFailed {
		t.Errorf("verify of an archive with a hidden local entry: exit %d stdout %q stderr %q; want exit 1", r.code, r.stdout, r.stderr)
	}
	if _, err := exec.LookPath("bsdtar"); err == nil {
		out := filepath.Join(dir, "bsdtar")
		os.Mkdir(out, 0o755)
		cmd := exec.Command("bsdtar", "-xf", "-", "-C", out)
		f, _ := os.Open(edited)
		defer f.Close()
		cmd.Stdin = struct{ *os.File }{f} // a pipe, not a seekable file
		if cmd.Run() == nil {
			if _, err := os.Stat(filepath.Join(out, "app/evil.sh")); err == nil {
				t.Logf("bsdtar reading it from a pipe extracts app/evil.sh")
			}
		}
	}
}

// TestAttack11JournalLeftSilently restores into a DEST whose top folder is append-only
// (chattr +a: entries can be made in it, not removed), so the journal of temp names the run
// makes there cannot be removed at the end. The restore says complete, exit 0, with no
// warning, on stderr or in --json's warnings, and leaves .backup-restore-*.journal in
// DEST: a file the archive does not hold, that nothing reported. restore.md: the journal is
// "removed when it ends, unless a temp file it lists could not be removed (then it stays,
// with a warning…)". The correct behaviour: a warning naming the journal that could not be
// removed (the output says exactly what is in DEST). The same happens with EIO injected on
// that unlinkat (strace -f -e inject=unlinkat:error=EIO:when=2 on a --jobs 1 run).
func TestAttack11JournalLeftSilently(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := t.TempDir()
	arch := backupOf(t, dir, "a")
	dest := filepath.Join(dir, "dest")
	os.Mkdir(dest, 0o755)
	if out, err := exec.Command("chattr", "+a", dest).CombinedOutput(); err != nil {
		t.Skipf("chattr +a: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("chattr", "-a", dest).Run() })
	r := backup(t, runOpts{dir: dir}, "restore", "--json", "--jobs", "1", arch, dest)
	left, _ := filepath.Glob(filepath.Join(dest, ".backup-restore-*.journal"))
	if len(left) > 0 && (r.code == exitComplete && !strings.Contains(r.stderr+r.stdout, "journal")) {
		t.Errorf("restore left %q in DEST and said nothing: exit %d stdout %s stderr %q", left, r.code, r.stdout, r.stderr)
	}
}

// TestAttack11UndoLosesXattrsAndACL: DEST/app/a.txt holds the user's own content, a
// user.* attribute and an ACL entry. restore --force (without --xattrs, the default)
// replaces it and writes a before-state; its undo, even with --xattrs, puts the content
// back but not the attribute nor the ACL: the before-state never saved them, so they are
// gone for good. restore.md promises that --force keeps what it replaces so the undo puts
// it back; the correct behaviour is a before-state that holds the attributes and ACLs of
// what it replaces whatever the restore's own --xattrs (or a restore that refuses to
// replace a file whose attributes it cannot save), so that the undo restores them.
func TestAttack11UndoLosesXattrsAndACL(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "setfattr")
	mustTool(t, "setfacl")
	mustTool(t, "getfattr")
	dir := t.TempDir()
	arch := backupOf(t, dir, "a")
	dest := filepath.Join(dir, "dest")
	makeTree(t, dest, map[string]node{"app/a.txt": {content: "mine\n"}})
	f := filepath.Join(dest, "app/a.txt")
	if out, err := exec.Command("setfattr", "-n", "user.note", "-v", "keep", f).CombinedOutput(); err != nil {
		t.Skipf("setfattr: %v %s", err, out)
	}
	if out, err := exec.Command("setfacl", "-m", "u:65534:rw", f).CombinedOutput(); err != nil {
		t.Skipf("setfacl: %v %s", err, out)
	}
	before, _ := exec.Command("getfattr", "-d", "-m", "-", "--absolute-names", f).Output()
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "-q", "--force", arch, dest), exitComplete)
	states, _ := filepath.Glob(filepath.Join(dir, "dest-before-restore-*.zip"))
	if len(states) != 1 {
		t.Fatalf("before-states %q", states)
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "-q", "--force", "--xattrs", states[0], dest), exitComplete)
	assertContent(t, f, "mine\n")
	after, _ := exec.Command("getfattr", "-d", "-m", "-", "--absolute-names", f).Output()
	if string(after) != string(before) {
		t.Errorf("attributes of app/a.txt after the undo:\n%s\nbefore the restore:\n%s", after, before)
	}
}

// TestAttack11UndoBreaksHardLink: DEST/app/a.txt is a hard link of DEST/keep.txt, a file the
// archive does not hold (two names, one file). restore --force replaces the name app/a.txt
// (rightly, by rename: keep.txt keeps its bytes), and its undo puts back app/a.txt as a
// separate file: the two names that were one file before are two files after "undo".
// The correct behaviour: the undo puts back exactly what was there (app/a.txt linked again
// to the file keep.txt still names, when that file is unchanged), or the before-state
// records the link and the undo warns that it could not remake it.
func TestAttack11UndoBreaksHardLink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch := backupOf(t, dir, "a")
	dest := filepath.Join(dir, "dest")
	makeTree(t, dest, map[string]node{"app/a.txt": {content: "mine\n"}})
	if err := os.Link(filepath.Join(dest, "app/a.txt"), filepath.Join(dest, "keep.txt")); err != nil {
		t.Fatal(err)
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "-q", "--force", arch, dest), exitComplete)
	assertContent(t, filepath.Join(dest, "keep.txt"), "mine\n")
	states, _ := filepath.Glob(filepath.Join(dir, "dest-before-restore-*.zip"))
	if len(states) != 1 {
		t.Fatalf("before-states %q", states)
	}
	r := backup(t, runOpts{dir: dir}, "restore", "--force", states[0], dest)
	mustExit(t, r, exitComplete)
	a, err1 := os.Stat(filepath.Join(dest, "app/a.txt"))
	k, err2 := os.Stat(filepath.Join(dest, "keep.txt"))
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if !os.SameFile(a, k) && !strings.Contains(r.stderr, "link") {
		t.Errorf("after the undo app/a.txt and keep.txt are two files (links %d, %d), one before the restore; undo said %q",
			a.Sys().(*syscall.Stat_t).Nlink, k.Sys().(*syscall.Stat_t).Nlink, r.stderr)
	}
}

// TestAttack11PresentFileRewrittenBeforeSetuid: root restores, with --same-permissions, an
// archive holding app/tool, recorded as root's and setuid (04755), into a DEST where
// app/tool already holds the same bytes but belongs to nobody (0755), who keeps it open for
// writing. The plan hashes it (already present, metadata to fix); fixMeta opens it, fstats
// it (same inode and ctime as the plan saw) and then calls fchown, fchmod, futimens. strace
// holds the restore at that fchown, and nobody writes other bytes through the descriptor it
// held all along: the restore then makes the file root's and setuid, and says "1 file
// already there", complete, exit 0. The result is a setuid-root program with nobody's
// content: a local privilege escalation, and a receipt of a file "already there" whose
// bytes are not the archive's. Correct behaviour: owner and setuid are never given in place
// to a file that someone else could write while the restore works on it (write a file of
// the restore's own instead, as --force does), or the content is checked again after the
// owner and mode are set, and the file is not kept when it differs.
func TestAttack11PresentFileRewrittenBeforeSetuid(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "strace")
	dir := sharedTempDir(t)
	const good, evil = "#!/bin/sh\necho good\n", "#!/bin/sh\necho EVIL\n" // same length
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"tool": {content: good}})
	syscall.Chmod(filepath.Join(dir, "src/app/tool"), 0o4755)
	arch := filepath.Join(dir, "t.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	tool := filepath.Join(dest, "app/tool")
	os.MkdirAll(filepath.Join(dest, "app"), 0o755)
	os.WriteFile(tool, []byte(good), 0o755)
	for _, p := range []string{dest, filepath.Join(dest, "app"), tool} {
		os.Chown(p, nobody, nobody)
	}
	log := filepath.Join(dir, "strace.log")
	// nobody opens its file for writing before the restore starts, and writes once the
	// restore is held at its first fchown.
	attacker := exec.Command("bash", "-c", `exec 3<>"$1"; for i in $(seq 3000); do grep -q "fchown(" "$2" 2>/dev/null && break; sleep 0.005; done; printf "$3" >&3`,
		"attacker", tool, log, evil)
	attacker.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	if err := attacker.Start(); err != nil {
		t.Fatal(err)
	}
	waitForPath("/proc/" + strconv.Itoa(attacker.Process.Pid) + "/fd/3")
	cmd := exec.Command("strace", "-f", "-o", log, "-e", "trace=fchown", "-e", "inject=fchown:delay_enter=1500000:when=1",
		binary, "restore", "--same-permissions", "--jobs", "1", arch, dest)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.Run()
	attacker.Wait()
	b, _ := os.ReadFile(tool)
	var st syscall.Stat_t
	if err := syscall.Stat(tool, &st); err != nil {
		t.Fatal(err)
	}
	if string(b) != good && st.Uid == 0 && st.Mode&syscall.S_ISUID != 0 {
		t.Errorf("app/tool is root's and setuid (mode %o) with nobody's bytes %q; restore exit %d:\n%s", st.Mode&0o7777, b, cmd.ProcessState.ExitCode(), stderr.String())
	}
}

// a11Put writes each value of vs, little-endian, to b.
func a11Put(b *bytes.Buffer, vs []any) {
	for _, v := range vs {
		if err := le.Write(b, le.LittleEndian, v); err != nil {
			panic(err)
		}
	}
}

// a11OverlapZip is a zip of two stored entries that overlap: a.txt's data is b.txt's whole
// local entry (header and data), and the central directory lists both. Chained (each
// entry's data quoting the next entry's header, as in David Fifield's "better zip bomb"),
// 46 KB of such entries expand to 4.5 PB.
func a11OverlapZip() []byte {
	local := func(name string, data []byte) []byte {
		var b bytes.Buffer
		a11Put(&b, []any{uint32(0x04034b50), uint16(20), uint16(0), uint16(0), uint16(0), uint16(0x21),
			crc32.ChecksumIEEE(data), uint32(len(data)), uint32(len(data)), uint16(len(name)), uint16(0)})
		b.WriteString(name)
		b.Write(data)
		return b.Bytes()
	}
	central := func(name string, data []byte, off int) []byte {
		var b bytes.Buffer
		a11Put(&b, []any{uint32(0x02014b50), uint16(0x031e), uint16(20), uint16(0), uint16(0), uint16(0), uint16(0x21),
			crc32.ChecksumIEEE(data), uint32(len(data)), uint32(len(data)), uint16(len(name)), uint16(0), uint16(0), uint16(0), uint16(0),
			uint32(0o100644 << 16), uint32(off)})
		b.WriteString(name)
		return b.Bytes()
	}
	db := []byte("inner data\n")
	lb := local("b.txt", db)
	la := local("a.txt", lb)
	cd := append(central("a.txt", lb, 0), central("b.txt", db, 30+len("a.txt"))...)
	var eocd bytes.Buffer
	a11Put(&eocd, []any{uint32(0x06054b50), uint16(0), uint16(0), uint16(2), uint16(2), uint32(len(cd)), uint32(len(la)), uint16(0)})
	return append(append(la, cd...), eocd.Bytes()...)
}

// TestAttack11OverlappingEntriesPass: an archive whose entries overlap (b.txt's local entry
// lies inside a.txt's data) is the building block of the non-recursive zip bomb. unzip -t
// refuses it ("invalid zip file with overlapped components (possible zip bomb)", exit 12);
// backup verify says ok and restore writes both (exit 0), so an archive of a few KB that
// overlaps its entries a thousand times over is restored until the disk is full. verify
// promises the zip structure is checked as unzip -t checks it. Correct behaviour: verify
// reports the overlapping entries (exit 1), and restore lists them as damaged and does not
// write them (or refuses the archive).
func TestAttack11OverlappingEntriesPass(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch := filepath.Join(dir, "ov.zip")
	os.WriteFile(arch, a11OverlapZip(), 0o644)
	if r := backup(t, runOpts{dir: dir}, "verify", arch); r.code != exitFailed {
		t.Errorf("verify of overlapping entries: exit %d stdout %q stderr %q; want exit 1", r.code, r.stdout, r.stderr)
	}
	if r := backup(t, runOpts{dir: dir}, "restore", arch, filepath.Join(dir, "dest")); r.code == exitComplete {
		t.Errorf("restore of overlapping entries: exit 0, %q; want them refused or damaged", r.stderr)
	}
	if _, err := exec.LookPath("unzip"); err == nil {
		out, err := exec.Command("unzip", "-t", arch).CombinedOutput()
		t.Logf("unzip -t: %v\n%s", err, out)
	}
}

// TestAttack11LinkGroupJoinsSwappedAnchor: root restores an archive where app/a.txt and
// app/sub/hl are one file (a hard-link group; a.txt is its anchor) into a DEST whose app/
// belongs to nobody. strace holds the restore right after it renamed app/a.txt into place,
// and nobody, who may rename in its own folder, puts a file of its own ("EVIL\n", same
// size) at app/a.txt. relink then takes whatever app/a.txt names now as the anchor (link()
// stats the anchor's name, never compares it with what this run placed there) and replaces
// app/sub/hl, in root's folder app/sub, by a link to nobody's file: hl holds nobody's
// bytes, belongs to nobody (who can rewrite it at will), and the restore says complete,
// exit 0, no warning. Correct behaviour: a member is linked only to the file this run
// placed (or kept) at the anchor's name (p.placed[anchor]); when the anchor's name holds
// another file, the member stays the separate copy the restore wrote, with a warning (or
// the entry fails, exit 3), and hl keeps the archived bytes.
func TestAttack11LinkGroupJoinsSwappedAnchor(t *testing.T) {
	t.Parallel()
	a11LinkSwap(t, false)
}

// TestAttack11LinkGroupJoinsSwappedAnchorTemp is the same attack one step earlier: strace
// holds the restore as it enters the renameat2 that puts app/a.txt's temp file
// (.a.txt.restore-TOKEN-1, in nobody's folder) in place, and nobody puts its own file at the
// temp name. renameNew renames by name without checking that the temp name still holds
// the file this run wrote (and checked against its SHA-256), records nobody's file as the
// one it placed, reports app/a.txt restored, and relink links app/sub/hl, in root's folder,
// to it. A fix that only compares the anchor with what the run placed misses this one:
// the temp name must be checked to hold the written file (fstat of the descriptor against
// an fstatat of the name) before the rename, and the name after it.
func TestAttack11LinkGroupJoinsSwappedAnchorTemp(t *testing.T) {
	t.Parallel()
	a11LinkSwap(t, true)
}

// a11LinkSwap runs the attack of TestAttack11LinkGroupJoinsSwappedAnchor: nobody swaps
// app/a.txt for its own file right after the rename (or its temp file right before it,
// with temp).
func a11LinkSwap(t *testing.T, temp bool) {
	mustRoot(t)
	mustTool(t, "strace")
	dir := sharedTempDir(t)
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"a.txt": {content: "good\n"}, "sub/x": {content: "x\n"}})
	if err := os.Link(filepath.Join(dir, "src/app/a.txt"), filepath.Join(dir, "src/app/sub/hl")); err != nil {
		t.Fatal(err)
	}
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	os.MkdirAll(filepath.Join(dest, "app"), 0o755)
	os.Chown(filepath.Join(dest, "app"), nobody, nobody)
	log := filepath.Join(dir, "strace.log")
	inject := "inject=renameat2:delay_exit=1500000:when=1"
	if temp {
		inject = "inject=renameat2:delay_enter=1500000:when=1"
	}
	cmd := exec.Command("strace", "-f", "-o", log, "-e", "trace=renameat2", "-e", inject,
		binary, "restore", "--jobs", "1", arch, dest)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	name := "a.txt"
	waitForLine(t, log, func(l string) bool {
		if i := strings.Index(l, `".a.txt.restore-`); temp && i >= 0 {
			name = strings.SplitN(l[i+1:], `"`, 2)[0]
		}
		return strings.Contains(l, `renameat2(`) && strings.Contains(l, `"a.txt"`)
	})
	swap := exec.Command("sh", "-c", `cd "$1" && mv "$2" .old && printf 'EVIL\n' > "$2"`, "swap", filepath.Join(dest, "app"), name)
	swap.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	if out, err := swap.CombinedOutput(); err != nil {
		t.Fatalf("swap as nobody: %v %s", err, out)
	}
	cmd.Wait()
	hl := filepath.Join(dest, "app/sub/hl")
	b, _ := os.ReadFile(hl)
	var st syscall.Stat_t
	syscall.Lstat(hl, &st)
	if string(b) != "good\n" || st.Uid == nobody {
		t.Errorf("app/sub/hl (in root's app/sub) holds %q, owner uid %d, links %d: nobody's file; restore exit %d:\n%s",
			b, st.Uid, st.Nlink, cmd.ProcessState.ExitCode(), stderr.String())
	}
}

// TestAttack11SymlinkTempSwappedGetsOwner: root restores an archive holding the stored
// symlink app/sub/l into a DEST where app/sub belongs to nobody. The restore makes the link
// under a temp name (symlinkat), then gives that name its owner (fchownat), mtime
// (utimensat) and attributes, all by name, then renames it into place: nothing checks that
// the name still holds the link it made. strace holds the restore after symlinkat, and
// nobody replaces the temp link by a regular file of its own, mode 0666: the restore makes
// nobody's file root's, gives it the archive's mtime, renames it to app/sub/l and reports
// "1 symlink", complete, exit 0. app/sub/l is a root-owned, world-writable regular file with
// nobody's bytes where a symlink was recorded. Correct behaviour: the temp name is checked
// to hold the symlink this run made (its identity from an fstatat right after symlinkat)
// before its owner, attributes and mtime are set and before it is renamed; otherwise the
// entry fails (exit 3) and nobody's file is left as it is.
func TestAttack11SymlinkTempSwappedGetsOwner(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "strace")
	dir := sharedTempDir(t)
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"sub/l": {kind: "symlink", content: "../target"}})
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--symlinks", "store", "-o", arch, "src/app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	sub := filepath.Join(dest, "app/sub")
	os.MkdirAll(sub, 0o755)
	os.Chown(sub, nobody, nobody)
	log := filepath.Join(dir, "strace.log")
	cmd := exec.Command("strace", "-f", "-o", log, "-e", "trace=symlinkat", "-e", "inject=symlinkat:delay_exit=1500000:when=1",
		binary, "restore", "--jobs", "1", arch, dest)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var tmp string
	waitForLine(t, log, func(l string) bool {
		if i := strings.Index(l, `".l.restore-`); i >= 0 {
			tmp = strings.SplitN(l[i+1:], `"`, 2)[0]
			return true
		}
		return false
	})
	swap := exec.Command("sh", "-c", `cd "$1" && rm -f "$2" && printf 'mine\n' > "$2" && chmod 666 "$2"`, "swap", sub, tmp)
	swap.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	if out, err := swap.CombinedOutput(); err != nil {
		t.Fatalf("swap as nobody: %v %s", err, out)
	}
	cmd.Wait()
	var st syscall.Stat_t
	if err := syscall.Lstat(filepath.Join(sub, "l"), &st); err != nil {
		t.Fatal(err)
	}
	if st.Mode&syscall.S_IFMT == syscall.S_IFREG && st.Uid == 0 {
		t.Errorf("app/sub/l is a regular file (mode %o) that nobody wrote, now owned by root; restore exit %d:\n%s",
			st.Mode&0o7777, cmd.ProcessState.ExitCode(), stderr.String())
	}
}

// TestAttack11PrintedUndoLosesSetuid: DEST/app/a.txt is root's setuid program (04755) with
// other bytes than the archive's. restore --force --same-permissions --xattrs replaces it
// and prints "undo: backup restore --force BEFORE-STATE DEST": the very command run as
// printed puts the bytes back, but not the setuid bit (the file comes back 0755), since the
// printed command leaves out the --same-permissions (and --xattrs) that the restore itself
// used and that the undo needs to put back what was there. Correct behaviour: the printed
// undo command (and --json's undo) carries the flags needed to put back exactly what was
// replaced, at least those the restore ran with.
func TestAttack11PrintedUndoLosesSetuid(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := t.TempDir()
	arch := backupOf(t, dir, "a")
	dest := filepath.Join(dir, "dest")
	makeTree(t, dest, map[string]node{"app/a.txt": {content: "mine\n"}})
	f := filepath.Join(dest, "app/a.txt")
	syscall.Chmod(f, 0o4755)
	r := backup(t, runOpts{dir: dir}, "restore", "--force", "--same-permissions", "--xattrs", arch, dest)
	mustExit(t, r, exitComplete)
	i := strings.Index(r.stderr, "(undo: backup ")
	if i < 0 {
		t.Fatalf("no undo command printed:\n%s", r.stderr)
	}
	line := strings.TrimSuffix(strings.SplitN(r.stderr[i+len("(undo: backup "):], "\n", 2)[0], ")")
	args := strings.Fields(line) // the test's paths hold no spaces
	mustExit(t, backup(t, runOpts{dir: dir}, args...), exitComplete)
	assertContent(t, f, "mine\n")
	var st syscall.Stat_t
	syscall.Stat(f, &st)
	if st.Mode&0o7777 != 0o4755 {
		t.Errorf("after the printed undo (backup %s) app/a.txt has mode %o, was 4755", line, st.Mode&0o7777)
	}
}

// TestAttack11DeepEntryStarvesNeighbours: an archive of three files, "first", one 300
// folders deep (a/a/…/f: a 601-byte name, far below PATH_MAX) and "ok", restored with
// --jobs 1 under ulimit -n 256. The deep file fails ("too many open files": the worker keeps
// every folder of the path open), and so does "ok", a file at the top of DEST, since the
// descriptors of the deep path are still held when it is written: exit 3 with "ok: create
// temp file: too many open files". restore.md: "an archive of deep trees is restored by
// fewer workers, not with 'too many open files'", and never fewer than one. Correct
// behaviour: a path deeper than the descriptors allow is walked holding only what the
// limit allows (openat needs the parent only), so all three are restored (exit 0); at the
// very least the failure of one entry never fails the entries after it.
func TestAttack11DeepEntryStarvesNeighbours(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range []string{"first", strings.Repeat("a/", 300) + "f", "ok"} {
		fh := &zip.FileHeader{Name: name, Method: zip.Store}
		fh.SetMode(0o644)
		w, err := zw.CreateHeader(fh)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte("data"))
	}
	zw.Close()
	arch := filepath.Join(dir, "deep.zip")
	os.WriteFile(arch, buf.Bytes(), 0o644)
	dest := filepath.Join(dir, "dest")
	cmd := exec.Command("sh", "-c", `ulimit -n 256 && exec "$@"`, "sh", binary, "restore", "--jobs", "1", arch, dest)
	out, err := cmd.CombinedOutput()
	if _, serr := os.Stat(filepath.Join(dest, "ok")); serr != nil {
		t.Errorf("ok, a file at the top of DEST, not restored after the deep entry (%v):\n%.800s", err, out)
	}
	if _, serr := os.Stat(filepath.Join(dest, strings.Repeat("a/", 300)+"f")); serr != nil {
		t.Errorf("the file 300 folders deep not restored under ulimit -n 256 (%v)", err)
	}
}
