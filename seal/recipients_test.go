package seal

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestRecipientsAdd(t *testing.T) {
	k := newTestKeys(t)
	var r Recipients
	for _, s := range []string{k.x25519.Recipient().String(), " " + k.sshPub + "\n"} {
		if err := r.Add(s); err != nil {
			t.Fatalf("Add: %v", err)
		}
	}
	names := r.Names()
	if len(names) != 2 || names[0] != k.x25519.Recipient().String() || !strings.HasPrefix(names[1], "ssh-ed25519 SHA256:") || strings.Contains(names[1], "test@host") {
		t.Errorf("names %q: want the age key, then the SSH key's type and fingerprint without its comment", names)
	}
	if err := r.Check(); err != nil {
		t.Errorf("Check: %v", err)
	}
	var pq Recipients
	if err := pq.Add(k.hybrid.Recipient().String()); err != nil {
		t.Fatal(err)
	}
	if n := pq.Names()[0]; !strings.HasPrefix(n, "age1pq1 sha256:") || len(n) != len("age1pq1 sha256:")+64 {
		t.Errorf("post-quantum name %q, want age1pq1 sha256:HEX", n)
	}
	if err := pq.Check(); err != nil {
		t.Errorf("Check of one post-quantum recipient: %v", err)
	}
	if err := pq.Add(k.x25519.Recipient().String()); err != nil {
		t.Fatal(err)
	}
	if err := pq.Check(); err == nil || !strings.Contains(err.Error(), "post-quantum") {
		t.Errorf("Check of post-quantum and classic recipients: %v, want a refusal naming post-quantum", err)
	}
}

// A secret pasted where a recipient goes is refused without being repeated: errors are
// printed, and may land in logs.
func TestRecipientsNeverEcho(t *testing.T) {
	k := newTestKeys(t)
	secrets := []string{k.x25519.String(), k.hybrid.String(), string(k.sshPrivate), "age1notakey", "ssh-ed25519 AAAAgarbage", "hunter2"}
	for _, s := range secrets {
		var r Recipients
		err := r.Add(s)
		if err == nil {
			t.Errorf("Add(%.20q…) took it", s)
			continue
		}
		if strings.Contains(err.Error(), strings.TrimSpace(s)) || len(s) > 12 && strings.Contains(err.Error(), s[4:12]) {
			t.Errorf("error %q repeats what was given", err)
		}
	}
	var r Recipients
	if err := r.Add(k.x25519.String()); err == nil || !strings.Contains(err.Error(), "age-keygen -y") {
		t.Errorf("a secret key as recipient: %v, want the hint to give its public key", err)
	}
}

func TestRecipientsReadFile(t *testing.T) {
	k := newTestKeys(t)
	body := "# team keys\n\n" + k.x25519.Recipient().String() + "\n  # indented comment\n" + k.sshPub + "\r\n"
	var r Recipients
	if warning, err := r.ReadFile(writeFile(t, "recipients", []byte(body), 0o644)); err != nil || warning != "" {
		t.Fatalf("ReadFile: %v (warning %q)", err, warning)
	}
	if r.Len() != 2 {
		t.Errorf("%d recipients, want 2", r.Len())
	}
	bad := "# keys\n" + k.x25519.Recipient().String() + "\n" + k.x25519.String() + "\n"
	_, err := r.ReadFile(writeFile(t, "bad", []byte(bad), 0o644))
	if err == nil || !strings.HasPrefix(err.Error(), "line 3: ") || strings.Contains(err.Error(), k.x25519.String()) {
		t.Errorf("a secret key on line 3: %v, want an error naming line 3 and not the key", err)
	}
	if _, err := r.ReadFile(writeFile(t, "empty", []byte("# nothing\n\n"), 0o644)); err == nil {
		t.Error("a file of comments only was taken")
	}
}

// TestRecipientsFileWritableByOthers: a recipients file that group or others may write is
// used, with a warning: who can write it can add a recipient of their own, who then reads
// every archive encrypted with it.
func TestRecipientsFileWritableByOthers(t *testing.T) {
	k := newTestKeys(t)
	body := []byte(k.x25519.Recipient().String() + "\n")
	for _, mode := range []os.FileMode{0o664, 0o646, 0o666} {
		var r Recipients
		path := writeFile(t, fmt.Sprintf("recipients-%o", mode), body, mode)
		warning, err := r.ReadFile(path)
		if err != nil || r.Len() != 1 {
			t.Errorf("mode %04o: %v, %d recipients", mode, err, r.Len())
		}
		if !strings.Contains(warning, fmt.Sprintf("can be written by group or others (mode %04o)", mode)) {
			t.Errorf("mode %04o: warning %q", mode, warning)
		}
	}
}

// A FIFO named as a recipients or identity file is refused at once: never waited on.
func TestKeyFileNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	var r Recipients
	if _, err := r.ReadFile(fifo); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("recipients FIFO: %v", err)
	}
	var ids Identities
	if _, err := ids.ReadFile(dir); err == nil {
		t.Error("a folder was read as an identity file")
	}
	if _, err := ids.ReadFile(filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Errorf("missing identity file: %v", err)
	}
}
