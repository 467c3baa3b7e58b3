package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackRecipientsFileInFolderOthersWrite: a recipients file of mode 0644 in a folder
// that others may write to (without the sticky bit), or that belongs to another user, was
// used without a word, though whoever can write the folder can put a recipients file of
// their own at its name, adding their key, and read every backup made after: the warning
// of a file others can write, for the same reason, said nothing of its folder. The folder
// now gets the warning line too, by the rule of the local copies of sets in a bucket
// (atomicfile.FixedPath); a sticky folder (/tmp) gets none.
func TestAttackRecipientsFileInFolderOthersWrite(t *testing.T) {
	t.Parallel()
	mustRoot(t) // a folder of another user
	key := newAgeKey(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "x"}})
	for _, c := range []struct {
		name   string
		mode   os.FileMode
		owner  int
		warned bool
	}{
		{"open", 0o777, 0, true},
		{"theirs", 0o755, nobody, true},
		{"sticky", 0o777 | os.ModeSticky, 0, false},
		{"own", 0o755, 0, false},
	} {
		folder := filepath.Join(dir, c.name)
		file := filepath.Join(folder, "recipients")
		if err := os.Mkdir(folder, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(key.recipient+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(folder, c.mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(folder, c.owner, c.owner); err != nil {
			t.Fatal(err)
		}
		r := backup(t, runOpts{dir: dir}, "create", "-q", "--recipients-file", file, "-o", filepath.Join(dir, c.name+".zip.age"), "app")
		mustExit(t, r, exitComplete)
		got := strings.Contains(r.stderr, "warning: recipients file "+file+" can be replaced by others: "+folder)
		if got != c.warned || strings.Count(r.stderr, "\n") > 1 {
			t.Errorf("%s: stderr %q; want one warning line naming %s: %v", c.name, r.stderr, folder, c.warned)
		}
	}
}
