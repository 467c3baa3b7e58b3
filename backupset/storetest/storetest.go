// Package storetest checks that an implementation of backupset.Store keeps the promises the
// set's rules rely on: create-once, compare-and-swap, conditional delete, ranged reads, and
// one lock holder at a time. The folder and the S3 store run the same checks.
package storetest

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"time"

	"backup/backupset"
	"backup/format"
)

// Run runs every check on a fresh, empty store from newStore.
func Run(t *testing.T, newStore func(t *testing.T) backupset.Store) {
	t.Run("create once", func(t *testing.T) { createOnce(t, newStore(t)) })
	t.Run("compare and swap", func(t *testing.T) { compareAndSwap(t, newStore(t)) })
	t.Run("conditional delete", func(t *testing.T) { conditionalDelete(t, newStore(t)) })
	t.Run("list and read", func(t *testing.T) { listAndRead(t, newStore(t)) })
	t.Run("lock", func(t *testing.T) { lockOnce(t, newStore(t)) })
	t.Run("LATEST race lost", func(t *testing.T) { latestRaceLost(t, newStore(t)) })
}

// putRun stores a complete run: an archive of arbitrary bytes and a receipt that matches it.
func putRun(t *testing.T, st backupset.Store, name string, started time.Time) {
	t.Helper()
	content := "archive " + name
	put(t, st, name, content, "")
	rc := &format.Receipt{Schema: format.ReceiptSchema, Status: format.Complete, StartedAt: started, FinishedAt: started,
		Archive: &format.ArchiveInfo{Path: name, Size: int64(len(content))}}
	data, err := rc.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	put(t, st, name+format.ReceiptSuffix, string(data), "")
}

// latestRaceLost moves LATEST behind the lock holder's back, after it read the pointer (a
// writer that ignored the lock, or one that took over a lock this run held too long): the
// holder's Activate must fail and leave the other writer's pointer.
func latestRaceLost(t *testing.T, st backupset.Store) {
	t0 := time.Date(2026, 3, 1, 2, 0, 0, 0, time.UTC)
	a, b, c := backupset.ArchiveName("app", t0, 1), backupset.ArchiveName("app", t0.Add(time.Hour), 1), backupset.ArchiveName("app", t0.Add(2*time.Hour), 1)
	for i, name := range []string{a, b, c} {
		putRun(t, st, name, t0.Add(time.Duration(i)*time.Hour))
	}
	etag := put(t, st, backupset.LatestName, a+"\n", "")
	l, err := backupset.Acquire(t.Context(), st, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if name, err := l.Pointer(t.Context()); err != nil || name != a {
		t.Fatalf("Pointer: %q, %v; want %s", name, err, a)
	}
	put(t, st, backupset.LatestName, c+"\n", etag)
	err = l.Activate(t.Context(), b, false, func(string) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "moved by another writer") {
		t.Errorf("Activate after LATEST moved: %v, want the lost race named", err)
	}
	if got, _ := read(t, st, backupset.LatestName); got != c+"\n" {
		t.Errorf("LATEST %q, want the other writer's %q", got, c+"\n")
	}
}

func put(t *testing.T, st backupset.Store, name, data, ifMatch string) string {
	t.Helper()
	etag, err := st.Put(t.Context(), name, []byte(data), ifMatch)
	if err != nil {
		t.Fatalf("Put(%s): %v", name, err)
	}
	return etag
}

func read(t *testing.T, st backupset.Store, name string) (string, string) {
	t.Helper()
	data, etag, err := st.ReadFile(t.Context(), name, 1<<20)
	if err != nil {
		t.Fatalf("ReadFile(%s): %v", name, err)
	}
	return string(data), etag
}

func createOnce(t *testing.T, st backupset.Store) {
	put(t, st, "a", "first", "")
	if _, err := st.Put(t.Context(), "a", []byte("second"), ""); !errors.Is(err, backupset.ErrExists) {
		t.Errorf("second create-once Put: %v, want ErrExists", err)
	}
	if got, _ := read(t, st, "a"); got != "first" {
		t.Errorf("after a refused create: %q, want %q", got, "first")
	}
}

func compareAndSwap(t *testing.T, st backupset.Store) {
	old := put(t, st, "LATEST", "one\n", "")
	_, etag := read(t, st, "LATEST")
	if etag != old {
		t.Errorf("ETag read %q, Put returned %q", etag, old)
	}
	cur := put(t, st, "LATEST", "two\n", old)
	if _, err := st.Put(t.Context(), "LATEST", []byte("three\n"), old); !errors.Is(err, backupset.ErrChanged) {
		t.Errorf("Put on a stale ETag: %v, want ErrChanged", err)
	}
	if _, err := st.Put(t.Context(), "missing", []byte("x"), cur); !errors.Is(err, backupset.ErrChanged) {
		t.Errorf("Put with an ETag on a missing file: %v, want ErrChanged", err)
	}
	if got, _ := read(t, st, "LATEST"); got != "two\n" {
		t.Errorf("LATEST %q, want %q", got, "two\n")
	}
}

func conditionalDelete(t *testing.T, st backupset.Store) {
	old := put(t, st, "r", "one", "")
	cur := put(t, st, "r", "two", old)
	if err := st.Delete(t.Context(), "r", old); !errors.Is(err, backupset.ErrChanged) {
		t.Errorf("Delete on a stale ETag: %v, want ErrChanged", err)
	}
	if err := st.Delete(t.Context(), "r", cur); err != nil {
		t.Errorf("Delete: %v", err)
	}
	if _, err := st.Stat(t.Context(), "r"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat after Delete: %v, want fs.ErrNotExist", err)
	}
	if err := st.Delete(t.Context(), "r", cur); err != nil {
		t.Errorf("Delete of a missing file: %v, want nil", err)
	}
}

func listAndRead(t *testing.T, st backupset.Store) {
	if objs, err := st.List(t.Context()); err != nil || len(objs) != 0 {
		t.Fatalf("List of an empty store: %v, %v", objs, err)
	}
	put(t, st, "x.zip", "0123456789", "")
	put(t, st, "y", "y", "")
	objs, err := st.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range objs {
		names = append(names, o.Name)
		if o.Name == "x.zip" && o.Size != 10 {
			t.Errorf("x.zip listed with size %d, want 10", o.Size)
		}
	}
	slices.Sort(names)
	if want := []string{"x.zip", "y"}; !slices.Equal(names, want) {
		t.Errorf("List: %q, want %q", names, want)
	}
	if _, _, err := st.ReadFile(t.Context(), "x.zip", 5); err == nil {
		t.Error("ReadFile beyond its limit: no error")
	}
	f, err := st.Open(t.Context(), "x.zip")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 3)
	if n, err := f.ReadAt(buf, 7); n != 3 || string(buf) != "789" || (err != nil && err != io.EOF) {
		t.Errorf("ReadAt(7) = %d %q %v, want 3 \"789\"", n, buf[:n], err)
	}
	if f.Size() != 10 {
		t.Errorf("Size %d, want 10", f.Size())
	}
}

func lockOnce(t *testing.T, st backupset.Store) {
	h, err := st.Lock(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	var locked *backupset.LockedError
	if _, err := st.Lock(t.Context(), 0); !errors.As(err, &locked) {
		t.Errorf("second Lock: %v, want a LockedError", err)
	}
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	h, err = st.Lock(context.WithoutCancel(t.Context()), 0)
	if err != nil {
		t.Fatalf("Lock after Release: %v", err)
	}
	h.Release()
}
