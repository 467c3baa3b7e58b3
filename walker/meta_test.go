package walker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestReadlinkAndXattrs reads a symlink's target (a long one too) and each entry's extended
// attributes through the walk's directory descriptors, never following a link.
func TestReadlinkAndXattrs(t *testing.T) {
	root := t.TempDir()
	mkfiles(t, root, "f", "plain", "d/")
	long := strings.Repeat("x/", 600) + "end"
	for target, name := range map[string]string{"/etc/passwd": "abs", long: "long", "f": "to-f"} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"f", "d"} {
		err := unix.Setxattr(filepath.Join(root, p), "user.test", []byte("v-"+p), 0)
		if (errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EPERM)) && os.Getenv("CI") == "" {
			t.Skipf("no user attributes in %s: %v", root, err)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	targets, attrs := map[string]string{}, map[string]string{}
	w := Walker{Visit: func(e Entry) error {
		if e.Info.Mode()&os.ModeSymlink != 0 {
			target, err := e.Readlink()
			if err != nil {
				t.Errorf("%s: %v", e.Rel, err)
			}
			targets[e.Rel] = target
		}
		a, err := e.Xattrs()
		if err != nil {
			t.Errorf("%s: %v", e.Rel, err)
		}
		if v, ok := a["user.test"]; ok {
			attrs[e.Rel] = string(v)
		}
		return nil
	}}
	if err := w.Walk(context.Background(), root, "r"); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"abs": "/etc/passwd", "long": long, "to-f": "f"} {
		if targets[name] != want {
			t.Errorf("%s: target %.40q, want %.40q", name, targets[name], want)
		}
	}
	// to-f is a link to f: its own attributes are read, not f's.
	want := map[string]string{"f": "v-f", "d": "v-d"}
	if len(attrs) != len(want) || attrs["f"] != want["f"] || attrs["d"] != want["d"] {
		t.Errorf("attributes %q, want %q", attrs, want)
	}
}

// TestXattrRemovedWhileRead: an attribute removed between the call that sizes it and the
// one that reads it (the kernel drops security.capability when the file is written) is
// left out, as one removed since the listing. That second call returns -1; sliced with it,
// the run once panicked.
func TestXattrRemovedWhileRead(t *testing.T) {
	list := func(b []byte) (int, error) { return copy(b, "user.a\x00user.b\x00"), nil }
	sizing := map[string]bool{}
	get := func(name string, b []byte) (int, error) {
		if b == nil {
			sizing[name] = true
			return 3, nil
		}
		if name == "user.a" {
			return -1, unix.ENODATA
		}
		return copy(b, "v-b"), nil
	}
	attrs, err := readXattrs("f", func(b []byte) (int, error) {
		if b == nil {
			return 14, nil
		}
		return list(b)
	}, get)
	if err != nil || len(attrs) != 1 || string(attrs["user.b"]) != "v-b" || !sizing["user.a"] {
		t.Errorf("readXattrs = %q, %v; want only user.b, no error", attrs, err)
	}
}

// TestXattrsPastTheLimit: a file whose attributes hold more than MaxXattrsSize (200 values
// of 64 KiB, as XFS allows) is read as an error, the attributes lost, not recorded: a
// manifest record that large would make the whole archive unreadable to backup's reader.
func TestXattrsPastTheLimit(t *testing.T) {
	var names []byte
	for i := range 200 {
		names = fmt.Appendf(names, "user.a%d\x00", i)
	}
	list := func(b []byte) (int, error) {
		if b == nil {
			return len(names), nil
		}
		return copy(b, names), nil
	}
	get := func(_ string, b []byte) (int, error) {
		if b == nil {
			return 64 << 10, nil
		}
		return len(b), nil
	}
	attrs, err := readXattrs("f", list, get)
	if attrs != nil || err == nil || err.Error() != "xattr f: more than 8388608 bytes of attributes" {
		t.Errorf("readXattrs = %d attributes, %v; want none and the limit", len(attrs), err)
	}
}
