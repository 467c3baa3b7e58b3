package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"filippo.io/age"
)

// TestAttackS3RestoreForgedArchive: someone who may write the bucket, but cannot rewrite what
// the receipt records of the archive (its SHA-256), swaps a file's bytes in LATEST's object
// and edits the manifest to agree, keeping its size. A folder set's restore refuses that
// archive by its receipt's SHA-256 (TestRestoreSetForgedArchive); a whole restore of the
// bucket's set fetches every byte of it anyway, so it must refuse it too, before it writes
// anything, and not say complete for bytes the receipt does not vouch for.
func TestAttackS3RestoreForgedArchive(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f": {content: "good data 1\n"}})
	run := runOpts{dir: dir, env: s.env}
	mustExit(t, backup(t, run, "create", "--output-dir", s.loc, "app"), exitComplete)
	forgeSameSize(t, filepath.Join(s.dir, readLatest(t, s.dir)), "app/f", []byte("EVIL data 1\n"))

	mustExit(t, backup(t, run, "verify", s.loc), exitFailed)
	dest := filepath.Join(dir, "dest")
	r := backup(t, run, "restore", s.loc, dest)
	mustExit(t, r, exitFailed)
	if !strings.Contains(r.stderr, "does not match the receipt") {
		t.Errorf("stderr does not say the archive is not its receipt's:\n%s", r.stderr)
	}
	if got, err := os.ReadFile(filepath.Join(dest, "app/f")); err == nil {
		t.Errorf("restore wrote the forged file: %q", got)
	}
}

// TestAttackS3RestoreHashReadFailureClaimsForgery: the whole restore of a bucket set hashes
// LATEST's object against its receipt before it writes anything; a server that fails the
// ranged reads of that hash (500, every attempt) must fail the restore as a read that
// failed, naming the server's error, not as an archive that "is not the archive the backup
// wrote": nothing was found wrong with its bytes.
func TestAttackS3RestoreHashReadFailureClaimsForgery(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	// Incompressible, so that the archive spans blocks of 1 MiB.
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"r.bin": {content: randomString(t, 3<<20)}})
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "-q", "--output-dir", s.loc, "app"), exitComplete)
	proxy, _ := startRequestFaultProxy(t, s.srv.Endpoint, func(r *http.Request, kind string, _ int) fault {
		// Block 0 is read as the archive is opened (the sniff for age's header), and its
		// last as its directory is read: block 1 is read first by the hash.
		if kind == "ranged read" && strings.HasPrefix(r.Header.Get("Range"), fmt.Sprintf("bytes=%d-", 1<<20)) {
			return status500
		}
		return pass
	})
	env := append(slices.Clone(s.env), "AWS_ENDPOINT_URL_S3="+proxy, "AWS_MAX_ATTEMPTS=2")
	dest := filepath.Join(dir, "dest")
	r := backup(t, runOpts{dir: dir, env: env}, "restore", s.loc, dest)
	mustExit(t, r, exitFailed)
	if !strings.Contains(r.stderr, "InternalError") {
		t.Errorf("stderr does not name the server's error:\n%s", r.stderr)
	}
	if strings.Contains(r.stderr, "not the archive the backup wrote") {
		t.Errorf("a read that failed is claimed as a forged archive:\n%s", r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dest, "app/r.bin")); err == nil {
		t.Errorf("restore wrote the file:\n%s", r.stderr)
	}
}

// TestAttackRestoreSetHashEIOClaimsForgery: the same in a folder set, whose restore has
// always hashed LATEST's archive: an EIO from the disk while it hashes is reported as an
// archive that "is not the archive the backup wrote".
func TestAttackRestoreSetHashEIOClaimsForgery(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"r.bin": {content: randomString(t, 3<<20)}})
	set := filepath.Join(dir, "set")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app"), exitComplete)
	arch := filepath.Join(set, readLatest(t, set))
	hit := 0
	for n := 1; n <= 12; n++ {
		dest := filepath.Join(dir, fmt.Sprint("dest", n))
		failed, out, code := withEIO(t, dir, arch, n, "restore", set, dest)
		if len(failed) == 0 {
			continue
		}
		hit++
		if code != exitFailed || !strings.Contains(out, "input/output error") {
			t.Errorf("EIO injected at pread64 #%d of the archive: exit %d, and no word of it:\n%s", n, code, lastLines(out, 3))
		}
		if strings.Contains(out, "not the archive the backup wrote") {
			t.Errorf("EIO injected at pread64 #%d of the archive: claimed as a forged archive:\n%s", n, lastLines(out, 3))
		}
	}
	if hit == 0 {
		t.Fatal("no pread64 of the archive was failed")
	}
}

// TestS3RestoreForgedSealedArchive: the forgery of TestAttackS3RestoreForgedArchive in an
// encrypted set, by someone who holds the key (or wrote the plaintext): the zip decrypted,
// forged, and encrypted again to the set's recipient, of the same size. The whole restore
// with the key hashes the ciphertext against the receipt and refuses it.
func TestS3RestoreForgedSealedArchive(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	key := newAgeKey(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f": {content: "good data 1\n"}})
	run := runOpts{dir: dir, env: s.env}
	mustExit(t, backup(t, run, "create", "--recipient", key.recipient, "--output-dir", s.loc, "app"), exitComplete)
	reseal(t, key, filepath.Join(s.dir, readLatest(t, s.dir)), func(plain string) {
		forgeSameSize(t, plain, "app/f", []byte("EVIL data 1\n"))
	})

	dest := filepath.Join(dir, "dest")
	r := backup(t, run, "restore", "-i", key.identity, s.loc, dest)
	mustExit(t, r, exitFailed)
	if !strings.Contains(r.stderr, "does not match the receipt") {
		t.Errorf("stderr does not say the archive is not its receipt's:\n%s", r.stderr)
	}
	if got, err := os.ReadFile(filepath.Join(dest, "app/f")); err == nil {
		t.Errorf("restore wrote the forged file: %q", got)
	}
}

// reseal decrypts the age file at path with key, lets edit change the plaintext (a file), and
// encrypts it again to key's recipient, in place; it must keep its size.
func reseal(t *testing.T, key ageKey, path string, edit func(plain string)) {
	t.Helper()
	keys, err := os.ReadFile(key.identity)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := age.ParseIdentities(bytes.NewReader(keys))
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := age.Decrypt(bytes.NewReader(sealed), ids...)
	if err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(t.TempDir(), "plain.zip")
	data, err := io.ReadAll(r)
	if err == nil {
		err = os.WriteFile(plain, data, 0o600)
	}
	if err != nil {
		t.Fatal(err)
	}
	edit(plain)
	if data, err = os.ReadFile(plain); err != nil {
		t.Fatal(err)
	}
	rcp, err := age.ParseX25519Recipient(key.recipient)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w, err := age.Encrypt(&out, rcp)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if out.Len() != len(sealed) {
		t.Fatalf("resealed archive is %d bytes, want %d", out.Len(), len(sealed))
	}
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
