package main

import (
	"bytes"
	le "encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestAttackRestoreSetArchiveRewrittenAfterOpen: someone who may write a set's folder puts a
// file of their own at LATEST's target, so they may also write it in place. It holds the
// archive with app/secret's mode in the central directory changed from 0600 to 0644; once
// restore has read the directory (and the manifest) from it, and while it hashes the file
// from the start for the receipt's SHA-256, they write the original bytes back. The hash
// matches the receipt, and restore wrote app/secret 0644, from the directory it read
// before: the check vouched for bytes other than those restore used.
// Correct: a file that changed between the reading of its directory and the end of its
// hash is refused, nothing written.
func TestAttackRestoreSetArchiveRewrittenAfterOpen(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "strace")
	dir := t.TempDir()
	src, set := filepath.Join(dir, "app"), filepath.Join(dir, "set")
	makeTree(t, src, map[string]node{
		"big":    {content: strings.Repeat("0123456789abcdef", 1<<20)}, // 16 MiB: 128 reads to hash
		"secret": {content: "secret\n", mode: 0o600},
	})
	mustExit(t, backup(t, runOpts{}, "create", "--level", "0", "--output-dir", set, src), 0)
	archive := filepath.Join(set, readLatest(t, set))
	orig, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	at := centralAttrsAt(t, orig, "app/secret")
	forged := bytes.Clone(orig)
	le.LittleEndian.PutUint32(forged[at:], le.LittleEndian.Uint32(orig[at:])&^(0o777<<16)|0o644<<16)
	if err := os.WriteFile(archive, forged, 0o600); err != nil {
		t.Fatal(err)
	}

	// Every read is slowed, so that the hash, reading from the start, is far from the
	// directory at the end when its first read (of 10,000 bytes or more, at offset 0) is seen in
	// the log. Only the reads stop under strace (--seccomp-bpf): a run that stopped at every
	// call of the runtime's too did not reach the hash within a minute under CI's load.
	log := filepath.Join(dir, "strace.log")
	dest := filepath.Join(dir, "dest")
	cmd := exec.Command("strace", "--seccomp-bpf", "-f", "-qq", "-o", log, "-e", "trace=pread64", "-e", "inject=pread64:delay_exit=20000",
		binary, "restore", set, dest)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(time.Millisecond) {
		data, _ := os.ReadFile(log)
		if hashStarted.Match(data) {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the hash never started:\n%s", data)
		}
	}
	f, err := os.OpenFile(archive, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(orig[at:at+4], int64(at)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	err = cmd.Wait()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	if info, err := os.Stat(filepath.Join(dest, "app/secret")); err == nil {
		t.Errorf("restore wrote app/secret %v (exit %d), from a directory the receipt's SHA-256 did not vouch for:\n%s",
			info.Mode().Perm(), cmd.ProcessState.ExitCode(), stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Errorf("exit %d, want 1:\n%s", code, stderr.String())
	}
}

// hashStarted is a pread64 strace logged of 10,000 bytes or more at offset 0: not the reading
// of the directory, which reads the end of the file and the local header before it. Under
// load strace cuts a call that another thread's interrupts into "pread64(5, <unfinished ...>"
// and "<... pread64 resumed>..., 65536, 0) = 65536", whose second line says the same.
var hashStarted = regexp.MustCompile(`pread64(\(\d+, | resumed>).*, \d{5,}, 0\) = \d{5,}`)

// centralAttrsAt is where the external attributes of name's central record are in the zip
// data.
func centralAttrsAt(t *testing.T, data []byte, name string) int {
	t.Helper()
	end := bytes.LastIndex(data, []byte("PK\x05\x06"))
	if end < 0 {
		t.Fatal("no end record")
	}
	p := int(le.LittleEndian.Uint32(data[end+16:]))
	for p+46 <= end && le.LittleEndian.Uint32(data[p:]) == 0x02014b50 {
		n, e, c := int(le.LittleEndian.Uint16(data[p+28:])), int(le.LittleEndian.Uint16(data[p+30:])), int(le.LittleEndian.Uint16(data[p+32:]))
		if string(data[p+46:p+46+n]) == name {
			return p + 38
		}
		p += 46 + n + e + c
	}
	t.Fatalf("no central record for %s", name)
	return 0
}
