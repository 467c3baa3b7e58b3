package atomicfile

import (
	"io"
	"os"
	"testing"
)

// TestCreateUnnamed: a spool is a file to write and read back that leaves no name in its
// folder (that it never had one is archive's spill tests' to show, where it is used).
func TestCreateUnnamed(t *testing.T) {
	dir := t.TempDir()
	f, err := CreateUnnamed(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if names, _ := os.ReadDir(dir); len(names) > 0 {
		t.Errorf("the folder holds %v", names)
	}
	if _, err := f.WriteString("spooled"); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(io.NewSectionReader(f, 0, 7))
	if err != nil || string(got) != "spooled" {
		t.Errorf("read back %q, %v", got, err)
	}
}
