package main

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"filippo.io/age"

	"backup/format"
)

// sealedRuns lists the encrypted archives in a set folder, oldest first.
func sealedRuns(t *testing.T, dir string) []string {
	t.Helper()
	var runs []string
	for _, name := range listDir(t, dir) {
		if strings.HasSuffix(name, ".zip.age") {
			runs = append(runs, name)
		}
	}
	slices.SortFunc(runs, func(a, b string) int {
		ka, kb := setOrder(strings.TrimSuffix(a, ".age")), setOrder(strings.TrimSuffix(b, ".age"))
		return cmp.Or(strings.Compare(ka.stamp, kb.stamp), cmp.Compare(ka.run, kb.run))
	})
	return runs
}

// TestSealedSetKinds: a set is encrypted or plain. A run of the other kind is refused (exit
// 2, nothing written) unless --allow-plaintext; a change of recipients is said in one line;
// another source is refused when a key can tell, and a write-only host cannot tell.
func TestSealedSetKinds(t *testing.T) {
	t.Parallel()
	key, next := newAgeKey(t), newAgeKey(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "alpha\n"}})
	makeTree(t, filepath.Join(dir, "other", "app2"), map[string]node{"b.txt": {content: "beta\n"}})
	run := func(args ...string) result {
		return backup(t, runOpts{dir: dir}, append([]string{"create", "--output-dir", "set"}, args...)...)
	}
	mustExit(t, run("--recipient", key.recipient, "app"), exitComplete)
	before := listDir(t, filepath.Join(dir, "set"))
	r := run("app")
	mustExit(t, r, exitUsage)
	if !strings.Contains(r.stderr, "encrypted backup set") || !slices.Equal(listDir(t, filepath.Join(dir, "set")), before) {
		t.Errorf("a plain run into an encrypted set: %s; the set now holds %q", r.stderr, listDir(t, filepath.Join(dir, "set")))
	}
	r = run("--recipient", next.recipient, "app")
	mustExit(t, r, exitComplete)
	if !strings.Contains(r.stderr, "the recipients changed") {
		t.Errorf("a run to another key said nothing of it: %s", r.stderr)
	}
	r = run("--recipient", key.recipient, "-i", next.identity, "other/app2")
	mustExit(t, r, exitFailed)
	if !strings.Contains(r.stderr, `is the backup set of "app"`) {
		t.Errorf("another source, with the key of LATEST: %s", r.stderr)
	}
	// Without a key the host cannot tell which source an encrypted set holds.
	mustExit(t, run("--recipient", key.recipient, "other/app2"), exitComplete)

	r = backup(t, runOpts{dir: dir}, "create", "--output-dir", "plain", "app")
	mustExit(t, r, exitComplete)
	r = backup(t, runOpts{dir: dir}, "create", "--output-dir", "plain", "--recipient", key.recipient, "app")
	mustExit(t, r, exitUsage)
	if !strings.Contains(r.stderr, "plain backup set") {
		t.Errorf("an encrypted run into a plain set: %s", r.stderr)
	}
	r = backup(t, runOpts{dir: dir}, "create", "--output-dir", "plain", "--allow-plaintext", "--recipient", key.recipient, "app")
	mustExit(t, r, exitComplete)
	if !strings.Contains(r.stderr, "holds encrypted and plain backups") {
		t.Errorf("--allow-plaintext said nothing: %s", r.stderr)
	}
	if runs := sealedRuns(t, filepath.Join(dir, "plain")); len(runs) != 1 || readLatest(t, filepath.Join(dir, "plain")) != runs[0] {
		t.Errorf("LATEST %q, encrypted runs %q", readLatest(t, filepath.Join(dir, "plain")), runs)
	}
}

// TestSealedSetReuse: a set's encrypted runs copy unchanged entries from LATEST with an
// identity, and read every file (saying why) without; the receipt says what the read-back
// checked; status and prune need no key.
func TestSealedSetReuse(t *testing.T) {
	t.Parallel()
	key := newAgeKey(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "alpha\n"}, "b.txt": {content: "beta\n"}})
	set := filepath.Join(dir, "set")
	run := func(args ...string) (result, *format.Receipt) {
		r := backup(t, runOpts{dir: dir}, append([]string{"create", "--output-dir", "set", "--recipient", key.recipient}, args...)...)
		mustExit(t, r, exitComplete)
		runs := sealedRuns(t, set)
		return r, readReceipt(t, filepath.Join(set, runs[len(runs)-1]+".receipt.json"))
	}
	_, rc := run("app")
	if rc.Schema != format.SealedReceiptSchema || rc.Encryption.ReadBack != format.ReadBackCiphertext || len(rc.Sources) != 0 {
		t.Errorf("write-only run's receipt: %+v", rc)
	}
	r, rc := run("app")
	if rc.Counts.Reused != 0 || !strings.Contains(r.stderr, "reading every file") || !strings.Contains(r.stderr, "--identity") {
		t.Errorf("without a key: reused %d, stderr %q", rc.Counts.Reused, r.stderr)
	}
	r, rc = run("-i", key.identity, "app")
	if rc.Counts.Reused != 2 || rc.Encryption.ReadBack != format.ReadBackContents || strings.Contains(r.stderr, "reading every file") {
		t.Errorf("with the key: reused %d, read_back %q, stderr %q", rc.Counts.Reused, rc.Encryption.ReadBack, r.stderr)
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "status", "--max-age", "1h", "set"), exitComplete)
	r = backup(t, runOpts{dir: dir}, "prune", "--keep-last", "1", "set")
	mustExit(t, r, exitComplete)
	if runs := sealedRuns(t, set); len(runs) != 1 {
		t.Errorf("after prune --keep-last 1: %q", runs)
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "verify", "set"), exitComplete)
	mustExit(t, backup(t, runOpts{dir: dir}, "verify", "-i", key.identity, "set"), exitComplete)
	got := backup(t, runOpts{dir: dir}, "list", "-i", key.identity, "set")
	if got.code != exitComplete || !strings.Contains(got.stdout, "app/b.txt") {
		t.Errorf("list -i: %d %q", got.code, got.stdout)
	}
	if _, err := os.Stat(filepath.Join(set, "LATEST.activated")); err == nil {
		t.Error("create recorded an activation by hand")
	}
}

// TestSealedS3Set: an encrypted set in a bucket, written by a host without keys: the
// read-back checks the ciphertext; verify without a key checks it too; a key reads it
// back whole, lists it and restores one file with ranged reads.
func TestSealedS3Set(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	key := newAgeKey(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "alpha\n"}, "sub/b.txt": {content: strings.Repeat("b", 300000)}})
	run := func(args ...string) result { return backup(t, runOpts{dir: dir, env: s.env}, args...) }
	mustExit(t, run("create", "--output-dir", s.loc, "--recipient", key.recipient, "app"), exitComplete)
	mustExit(t, run("create", "--output-dir", s.loc, "--recipient", key.recipient, "--keep-last", "1", "app"), exitComplete)
	runs := sealedRuns(t, s.dir)
	if len(runs) != 1 || readLatest(t, s.dir) != runs[0] {
		t.Fatalf("bucket holds %q, LATEST %q", runs, readLatest(t, s.dir))
	}
	rc := readReceipt(t, filepath.Join(s.dir, runs[0]+".receipt.json"))
	if rc.Archive.Path != runs[0] || rc.Encryption.ReadBack != format.ReadBackCiphertext {
		t.Errorf("receipt archive %+v, encryption %+v", rc.Archive, rc.Encryption)
	}
	if r := run("verify", s.loc); r.code != exitComplete || !strings.Contains(r.stdout, "contents not checked") {
		t.Errorf("verify without a key: %d %q %q", r.code, r.stdout, r.stderr)
	}
	mustExit(t, run("verify", "-i", key.identity, s.loc), exitComplete)
	mustExit(t, run("status", "--max-age", "1h", s.loc), exitComplete)
	dest := filepath.Join(dir, "r")
	mustExit(t, run("restore", "-i", key.identity, "--include", "app/a.txt", s.loc, dest), exitComplete)
	if got, _ := os.ReadFile(filepath.Join(dest, "app", "a.txt")); string(got) != "alpha\n" {
		t.Errorf("restored %q", got)
	}
	if _, err := os.Stat(filepath.Join(dest, "app", "sub", "b.txt")); err == nil {
		t.Error("--include restored more")
	}
	// An object damaged in the bucket fails verify with the key, and without it.
	data := must(os.ReadFile(filepath.Join(s.dir, runs[0])))
	data[len(data)/2] ^= 1
	os.WriteFile(filepath.Join(s.dir, runs[0]), data, 0o644)
	mustExit(t, run("verify", s.loc), exitFailed)
	mustExit(t, run("verify", "-i", key.identity, s.loc), exitFailed)
}

// TestSealedAdoptActivate: an encrypted archive made elsewhere is adopted and activated
// with a key (exit 2 without one), its receipt naming no folder; a plain archive is refused
// by an encrypted set, and so is another source's encrypted archive, which the key tells.
func TestSealedAdoptActivate(t *testing.T) {
	t.Parallel()
	key := newAgeKey(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "alpha\n"}})
	makeTree(t, filepath.Join(dir, "x", "other"), map[string]node{"b.txt": {content: "beta\n"}})
	makeTree(t, filepath.Join(dir, "made"), map[string]node{".": {kind: "dir"}})
	run := func(args ...string) result { return backup(t, runOpts{dir: dir}, args...) }
	mustExit(t, run("create", "--recipient", key.recipient, "-o", "made/", "app"), exitComplete)
	made := onlyFile(t, filepath.Join(dir, "made"), ".zip.age")
	mustExit(t, run("adopt", "set", made), exitUsage)
	mustExit(t, run("adopt", "-i", key.identity, "--activate", "set", made), exitComplete)
	latest := readLatest(t, filepath.Join(dir, "set"))
	if rc := readReceipt(t, filepath.Join(dir, "set", latest+".receipt.json")); rc.Archive.Path != latest {
		t.Errorf("adopted receipt's archive.path %q, want %q", rc.Archive.Path, latest)
	}
	mustExit(t, run("activate", "set", latest), exitUsage)
	mustExit(t, run("activate", "-i", key.identity, "set", latest), exitComplete)

	mustExit(t, run("create", "-o", "plain.zip", "app"), exitComplete)
	r := run("adopt", "set", "plain.zip")
	mustExit(t, r, exitFailed)
	if !strings.Contains(r.stderr, "is an encrypted backup set") {
		t.Errorf("a plain archive into an encrypted set: %s", r.stderr)
	}
	mustExit(t, run("create", "--recipient", key.recipient, "-o", "other.zip.age", "x/other"), exitComplete)
	r = run("adopt", "-i", key.identity, "set", "other.zip.age")
	mustExit(t, r, exitFailed)
	if !strings.Contains(r.stderr, `holds "app"`) {
		t.Errorf("another source's encrypted archive: %s", r.stderr)
	}
}

// TestSealedS3Reuse: a run into an encrypted set in a bucket copies unchanged entries from
// its local copy of LATEST's archive when its --identity opens it; a run without keeps no
// copy and reads every file, saying why; backup sets shows the set, and no source.
func TestSealedS3Reuse(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	key := newAgeKey(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "alpha\n"}, "b.txt": {content: "beta\n"}})
	run := func(args ...string) (result, *format.Receipt) {
		r := backup(t, runOpts{dir: dir, env: s.env}, append([]string{"create", "--output-dir", s.loc, "--recipient", key.recipient}, append(args, "app")...)...)
		mustExit(t, r, exitComplete)
		return r, readReceipt(t, filepath.Join(s.dir, readLatest(t, s.dir)+".receipt.json"))
	}
	run("-i", key.identity)
	r, rc := run("-i", key.identity)
	if rc.Counts.Reused != 2 || rc.Encryption.ReadBack != format.ReadBackContents {
		t.Errorf("with the key: reused %d, read_back %q; %s", rc.Counts.Reused, rc.Encryption.ReadBack, r.stderr)
	}
	r, rc = run()
	if rc.Counts.Reused != 0 || !strings.Contains(r.stderr, "reading every file") || !strings.Contains(r.stderr, "encrypted") {
		t.Errorf("without a key: reused %d, stderr %q", rc.Counts.Reused, r.stderr)
	}
	// A key rotation with both identities given: the old one opens LATEST's archive to
	// copy from, the new one the archive the run writes, whose copy the cache keeps.
	other := newAgeKey(t)
	run("-i", key.identity)
	r = backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "--recipient", other.recipient, "-i", key.identity, "-i", other.identity, "app")
	rc = readReceipt(t, filepath.Join(s.dir, readLatest(t, s.dir)+".receipt.json"))
	if r.code != exitComplete || rc.Counts.Reused != 2 || strings.Contains(r.stderr, "reading every file") {
		t.Errorf("a rotation with both keys: exit %d, reused %d, stderr %q; want both files reused", r.code, rc.Counts.Reused, r.stderr)
	}
	// A new recipient the run's key does not open: the line names the archive it writes,
	// not LATEST's, which that key opens.
	r = backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "--recipient", other.recipient, "-i", key.identity, "app")
	if r.code != exitComplete || !strings.Contains(r.stderr, "no --identity of the run opens the archive it writes (its --recipient)") {
		t.Errorf("a new recipient: exit %d, stderr %q", r.code, r.stderr)
	}
	r = backup(t, runOpts{dir: dir, env: s.env}, "sets", s.loc)
	if r.code != exitComplete || !strings.Contains(r.stdout, "(encrypted)") || strings.Contains(r.stdout, "app") {
		t.Errorf("sets: %d %q %q", r.code, r.stdout, r.stderr)
	}
}

// TestAttackLostLatestLetsPlaintextIntoEncryptedSet: an encrypted set refuses a plain run
// (exit 2: a host that lost its --recipient must not write names and contents in clear into
// a set, or a bucket, whose point is that they are not there). But create checks the kind
// only against LATEST: with LATEST missing (lost, or deleted by whoever can write the set)
// or junk, the plain run is taken, writes app-….zip (the source's name, every file name and
// content in clear) beside the encrypted runs, and moves LATEST to it; from then on the set
// counts as plain and refuses the encrypted runs that belong to it.
// Correct: as activate and adopt do for the source, create falls back to the set's newest
// run when LATEST cannot tell, and refuses the run of the other kind (exit 2, nothing
// written).
func TestAttackLostLatestLetsPlaintextIntoEncryptedSet(t *testing.T) {
	t.Parallel()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	set := filepath.Join(dir, "set")
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"secret-name.txt": {content: "secret content\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "--recipient", id.Recipient().String(), "app"), exitComplete)
	if r := backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app"); r.code != exitUsage {
		t.Fatalf("a plain run into the encrypted set: exit %d, want %d: %s", r.code, exitUsage, r.stderr)
	}
	for _, latest := range []string{"junk\n", ""} {
		if latest == "" {
			os.Remove(filepath.Join(set, "LATEST"))
		} else if err := os.WriteFile(filepath.Join(set, "LATEST"), []byte(latest), 0o644); err != nil {
			t.Fatal(err)
		}
		r := backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app")
		plain, _ := filepath.Glob(filepath.Join(set, "app-*.zip"))
		if r.code != exitUsage || len(plain) > 0 {
			t.Errorf("LATEST %q: a plain run into the encrypted set: exit %d, wrote %v; want %d and nothing written:\n%s",
				latest, r.code, plain, exitUsage, r.stderr)
		}
		for _, p := range plain {
			os.Remove(p)
			os.Remove(p + ".receipt.json")
		}
	}
}
