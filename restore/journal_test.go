package restore

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"backup/archive"
	"backup/format"
)

// TestSweepTrustsOnlyDeadOwnJournals: a journal's temp files are removed only when the
// journal is this user's, writable by no one else, and no live run holds it; the rest of
// the time the files it lists stay.
func TestSweepTrustsOnlyDeadOwnJournals(t *testing.T) {
	const token = "k1"
	tests := []struct {
		name    string
		prepare func(t *testing.T, journal string)
		removed bool
	}{
		{"a dead run's", func(*testing.T, string) {}, true},
		{"a live run's", func(t *testing.T, journal string) {
			f, err := os.Open(journal)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"another user's", func(t *testing.T, journal string) {
			if os.Geteuid() != 0 {
				t.Skip("needs root to give the journal away")
			}
			if err := os.Chown(journal, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"writable by others", func(t *testing.T, journal string) { os.Chmod(journal, 0o622) }, false},
		{"a symlink", func(t *testing.T, journal string) {
			os.Rename(journal, journal+".real")
			os.Symlink(filepath.Base(journal)+".real", journal)
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dest := t.TempDir()
			os.MkdirAll(filepath.Join(dest, "app/sub"), 0o755)
			temp := filepath.Join(dest, "app/sub/.x.restore-"+token+"-1")
			os.WriteFile(temp, []byte("partial"), 0o600)
			journal := filepath.Join(dest, format.JournalPrefix+token+format.JournalSuffix)
			os.WriteFile(journal, []byte(journalHeader+"app/sub/.x.restore-"+token+"-1\x00"), 0o600)
			tt.prepare(t, journal)
			restoreInto(t, buildZip(t, sampleTree, true), dest, Options{})
			if _, err := os.Lstat(temp); (err == nil) == tt.removed {
				t.Errorf("temp file: lstat %v, want removed %v", err, tt.removed)
			}
			if _, err := os.Lstat(journal); (err == nil) == tt.removed {
				t.Errorf("journal: lstat %v, want removed %v", err, tt.removed)
			}
			if got, _ := filepath.Glob(filepath.Join(dest, format.JournalPrefix+"*"+format.JournalSuffix)); len(got) > 1 {
				t.Errorf("journals left: %q", got)
			}
		})
	}
}

// TestRestoreRefusesJournalNames: an archive whose top-level entry is named as restore's
// journal (which would make the next restore remove the files it lists) is refused, and
// nothing is written; below the top the name is an ordinary file. Verify says the same.
func TestRestoreRefusesJournalNames(t *testing.T) {
	name := format.JournalPrefix + "abc" + format.JournalSuffix
	dest := filepath.Join(t.TempDir(), "dest")
	plan, refused := restoreInto(t, buildZip(t, []zent{{name: name, body: journalHeader + "app/.f.restore-abc-1\x00"}, {name: "app/"}}, true), dest, Options{})
	if refused != nil || len(plan.Refused) != 1 || plan.Refused[0].Entry != name {
		t.Errorf("refused %q, want %s alone", problemStrings(plan.Refused), name)
	}
	if _, err := os.Lstat(dest); err == nil {
		t.Error("a refused restore created DEST")
	}
	res, err := archive.Verify(t.Context(), writeZip(t, buildZip(t, []zent{{name: name, body: "x"}}, true)), archive.VerifyOptions{})
	if err != nil || len(res.Problems) != 1 || res.Problems[0].Entry != name {
		t.Errorf("verify: %v, problems %q; want %s alone", err, problemStrings(res.Problems), name)
	}
	plan, restored := restoreInto(t, buildZip(t, []zent{{name: "app/"}, {name: "app/" + name, body: "x"}}, true), dest, Options{})
	if restored == nil || restored.Files != 1 {
		t.Errorf("below the top: refused %q, result %+v; want it restored", problemStrings(plan.Refused), restored)
	}
}

// TestIsTempOf: a journal's record is removed only when it is a safe path to a temp name of
// the run that wrote the journal (its token), whatever else the record says.
func TestIsTempOf(t *testing.T) {
	const token = "dn93e6868hsm"
	tests := []struct {
		name string
		want bool
	}{
		{"app/.f.txt.restore-dn93e6868hsm-1", true},
		{".f.txt.link-dn93e6868hsm-a9", true},
		{"app/.f.txt.restore-dn93e6868hsm-", false},
		{"app/.f.txt.restore-dn93e6868hsm-A", false},
		{"app/.f.txt.restore-dn93e6868hsm-1.bak", false},
		{"app/.f.txt.restore-0000000000-1", false},
		{"app/.f.txt.restore-1", false},
		{"app/f.txt.restore-dn93e6868hsm-1", false},
		{"app/notes", false},
		{"../.f.restore-dn93e6868hsm-1", false},
		{"/etc/.f.restore-dn93e6868hsm-1", false},
		{"app//.f.restore-dn93e6868hsm-1", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := isTempOf(tt.name, token); got != tt.want {
				t.Errorf("isTempOf(%q) = %v, want %v", tt.name, got, tt.want)
			}
		})
	}
}
