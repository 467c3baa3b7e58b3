package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"filippo.io/age"
)

// The secrets pass (docs/attacks.md, "Secrets"): credentials, keys and identities never
// appear in an error, a receipt, a metrics file or an event stream, and the files backup
// writes are never more readable than the docs say.

// TestAttackSecretKeyGivenAsKeyFile: a secret key pasted where the name of the file that
// holds it goes (-i KEY, --recipients-file KEY) is refused (exit 2, nothing written) by a
// line that names the flag, never the key: a cron job's mail or a CI log must not keep it.
// Before, the error was "--identity AGE-SECRET-KEY-1…: no such file or directory".
func TestAttackSecretKeyGivenAsKeyFile(t *testing.T) {
	t.Parallel()
	key := newAgeKey(t)
	hybrid, err := age.GenerateHybridIdentity()
	if err != nil {
		t.Fatal(err)
	}
	dir, archive := sealedArchive(t, key)
	classic := strings.TrimSpace(strings.Split(string(must(os.ReadFile(key.identity))), "\n")[1])
	for _, secret := range []string{classic, strings.ToLower(classic), hybrid.String()} {
		for _, args := range [][]string{
			{"create", "--output-dir", "set", "--recipient", key.recipient, "-i", secret, "app"},
			{"create", "--output-dir", "set", "--recipients-file", secret, "app"},
			{"list", "-i", key.identity, "-i", secret, archive},
			{"verify", "--json", "-i", secret, archive},
			{"restore", "-i", secret, archive, "restored"},
		} {
			r := backup(t, runOpts{dir: dir}, args...)
			if r.code != exitUsage || strings.Contains(r.stdout+r.stderr, secret[20:40]) {
				t.Errorf("%s: exit %d, stdout %q, stderr %q; want 2 and no key", args[0], r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr, " is a secret key, not the name of a file: ") {
				t.Errorf("%s: stderr %q; want the line to say what was given", args[0], r.stderr)
			}
		}
	}
	for _, name := range []string{"set", "restored"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			t.Errorf("a refused run made %s", name)
		}
	}
}

// TestAttackCredentialProcessOutputShown: an AWS credential_process (a profile's helper
// that prints the keys as JSON) whose output the SDK cannot parse (here an Expiration not in
// RFC 3339) fails every command that reaches the bucket, exit 1, by a line that says so
// without the output, which holds the keys: not on stderr, not in --json, not in the hooks'
// BACKUP_ERROR. Before, the SDK's "parse failed of process output: {…}" was printed whole.
func TestAttackCredentialProcessOutputShown(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "x"}})
	const secret = "wJalrXUtnFEMI-K7MDENG-bPxRfiCYzq7x9kwKEY"
	helper := filepath.Join(dir, "creds.sh")
	out := `{"SecretAccessKey":"` + secret + `","SessionToken":"` + secret + `","Version":1,"AccessKeyId":"AKIDzq7x9kw","Expiration":"2026-12-06 10:00:00"}`
	writeFile(t, helper, "#!/bin/sh\necho '"+out+"'\n")
	os.Chmod(helper, 0o755)
	creds := filepath.Join(dir, "credentials")
	writeFile(t, creds, "[default]\ncredential_process = "+helper+"\n")
	env := []string{"AWS_ACCESS_KEY_ID=", "AWS_SECRET_ACCESS_KEY=", "AWS_SESSION_TOKEN=", "AWS_PROFILE=default",
		"AWS_SHARED_CREDENTIALS_FILE=" + creds, "AWS_CONFIG_FILE=" + filepath.Join(dir, "no-config"),
		"AWS_ENDPOINT_URL_S3=http://127.0.0.1:9", "AWS_MAX_ATTEMPTS=1", "XDG_CACHE_HOME=" + filepath.Join(dir, "cache")}
	hookOut := filepath.Join(dir, "hook-error")
	for _, args := range [][]string{
		{"create", "--output-dir", "s3://bucket/set", "--json", "--exec-after", `printf %s "$BACKUP_ERROR" > ` + hookOut, "app"},
		{"status", "--json", "s3://bucket/set"},
		{"verify", "--json", "s3://bucket/set"},
		{"list", "s3://bucket/set"},
		{"restore", "s3://bucket/set", "restored"},
		{"prune", "--keep-last", "1", "s3://bucket/set"},
		{"sets", "s3://bucket"},
	} {
		r := backup(t, runOpts{dir: dir, env: env}, args...)
		if r.code != exitFailed || strings.Contains(r.stdout+r.stderr, secret[:12]) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 1 and no key", args[0], r.code, r.stdout, r.stderr)
		}
		if !strings.Contains(r.stderr, "credential_process printed no credentials backup can read (its output is not shown: it holds keys): ") {
			t.Errorf("%s: stderr %q; want it to say its output is not shown", args[0], r.stderr)
		}
	}
	if got := string(must(os.ReadFile(hookOut))); got == "" || strings.Contains(got, secret[:12]) {
		t.Errorf("the hook's BACKUP_ERROR: %q", got)
	}
}

// TestAttackCacheFolderOthersCanMove: the local copy of a bucket set's archive is written,
// kept and its predecessor removed by path, long after the cache's folders were checked. A
// folder on that path that another user owns (sudo keeping HOME=/home/alice), or may write
// without the sticky bit, lets them move the set's folder away in between and put a
// symlink there: the run would write its copy, and remove every file named like an archive,
// in a folder of their choosing. Such a cache is not used: a full run, said in one line,
// nothing written under it. A sticky folder (as /tmp) moves nothing of the run's and is
// used. Before, only the set's two folders inside the cache folder were checked.
func TestAttackCacheFolderOthersCanMove(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	s := newS3Set(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "alpha\n"}})
	for _, c := range []struct {
		name  string
		mode  os.FileMode
		owner int
		why   string
	}{
		{"another user's", 0o755, 65534, "belongs to another user (uid 65534)"},
		{"writable by all", 0o777, 0, "may be written by others (mode -rwxrwxrwx) and is not sticky"},
		{"sticky", 0o777 | os.ModeSticky, 0, ""},
	} {
		above := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
		if err := os.Mkdir(above, 0o755); err != nil {
			t.Fatal(err)
		}
		os.Chmod(above, c.mode)
		os.Chown(above, c.owner, c.owner)
		cache := filepath.Join(above, "cache")
		r := backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "--cache-dir", cache, "app")
		mustExit(t, r, exitComplete)
		copies, _ := filepath.Glob(filepath.Join(cache, "s3", "*", "*.zip"))
		line := "backup: reading every file: no unchanged entry is copied: cache folder " + cache + ": " + above + " " + c.why
		switch {
		case c.why == "" && len(copies) != 1:
			t.Errorf("%s: copies %q, stderr %q; want the cache used", c.name, copies, r.stderr)
		case c.why != "" && (len(copies) != 0 || !strings.Contains(r.stderr, line)):
			t.Errorf("%s: copies %q, stderr %q; want none, and the line %q", c.name, copies, r.stderr, line)
		}
	}
}

// TestAttackSealedForcedExitLeavesStagedCopy: an encrypted run stages a database's snapshot,
// plaintext, in $TMPDIR; docs/encryption.md promises it is removed on every path out of the
// run, Ctrl-C included. A second signal ends the process at once (a user pressing Ctrl-C
// twice, or SIGINT then systemd's SIGTERM): the staged copy must go too. Before, the
// process exited with the part of the database copied so far left in $TMPDIR (0600, for
// good); the first signal's cleanup won the race now and then, so the test tries a few
// times.
func TestAttackSealedForcedExitLeavesStagedCopy(t *testing.T) {
	t.Parallel()
	key := newAgeKey(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "a"}})
	db := openSQLite(t, filepath.Join(dir, "app", "big.db"), "delete")
	addRows(t, db, 3000, 16<<10) // 48 MiB: the copy takes long enough to be caught midway
	db.Close()
	tmp := filepath.Join(dir, "tmp")
	os.Mkdir(tmp, 0o700)
	for try := range 4 {
		out := filepath.Join(dir, "out", strings.Repeat("x", try+1)+".zip.age")
		os.MkdirAll(filepath.Dir(out), 0o755)
		cmd := exec.Command(binary, "create", "--recipient", key.recipient, "-o", out, "app")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill() })
		for deadline := time.Now().Add(30 * time.Second); stagedBytes(t, tmp) == 0; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the run never staged the snapshot")
			}
		}
		cmd.Process.Signal(os.Interrupt)
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
			t.Fatalf("try %d: exit %d, want %d", try, code, exitInterrupted)
		}
		if n := stagedBytes(t, tmp); n > 0 {
			t.Fatalf("try %d: %d bytes of the database's copy are left in $TMPDIR: %q", try, n, spoolsIn(t, tmp))
		}
	}
}

// stagedBytes is how many bytes the staged copies in dir hold.
func stagedBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	for _, name := range spoolsIn(t, dir) {
		if info, err := os.Stat(filepath.Join(dir, name)); err == nil {
			n += info.Size()
		}
	}
	return n
}
