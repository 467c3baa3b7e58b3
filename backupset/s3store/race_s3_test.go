package s3store

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"backup/backupset"
	"backup/backupset/s3store/s3test"
)

func newStore(t *testing.T, srv *s3test.Server) *Store {
	t.Helper()
	st, err := Open(t.Context(), "s3://"+srv.Bucket(t)+"/set", Options{PathStyle: true})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// race runs f in n goroutines started together and returns their errors.
func race(n int, f func() error) []error {
	errs := make([]error, n)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range n {
		done.Go(func() {
			start.Wait()
			errs[i] = f()
		})
	}
	start.Done()
	done.Wait()
	return errs
}

func winners(errs []error) int {
	n := 0
	for _, err := range errs {
		if err == nil {
			n++
		}
	}
	return n
}

// TestStaleLockTakenOverOnce leaves an expired lock object, as a killed run does, and lets
// two runs take it over at once, many times: exactly one wins each time, the other is told
// the set is locked.
func TestStaleLockTakenOverOnce(t *testing.T) {
	srv := s3test.Start(t)
	srv.SetEnv(t)
	st := newStore(t, srv)
	for round := range 10 {
		stale := []byte(`{"host":"gone","pid":1,"started":"2020-01-01T00:00:00Z","expires":"2020-01-01T00:05:00Z"}`)
		if err := st.Delete(t.Context(), backupset.LockName, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Put(t.Context(), backupset.LockName, stale, ""); err != nil {
			t.Fatal(err)
		}
		// Killed long ago by the server's clock too: its Last-Modified is the file's mtime.
		long := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
		if err := os.Chtimes(filepath.Join(srv.Root, st.bucket, st.key(backupset.LockName)), long, long); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var held []backupset.Held
		errs := race(2, func() error {
			h, err := st.Lock(t.Context(), 0)
			if err == nil {
				mu.Lock()
				held = append(held, h)
				mu.Unlock()
			}
			return err
		})
		if winners(errs) != 1 {
			t.Fatalf("round %d: %v; want exactly one taker", round, errs)
		}
		for _, err := range errs {
			var locked *backupset.LockedError
			if err != nil && !errors.As(err, &locked) {
				t.Errorf("round %d: the loser's error %v, want a LockedError", round, err)
			}
		}
		if err := held[0].Release(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLockRenewedAndLive: a held lock is renewed past its first expiry, and a live lock is
// never taken over.
func TestLockRenewedAndLive(t *testing.T) {
	srv := s3test.Start(t)
	srv.SetEnv(t)
	st := newStore(t, srv)
	st.lockTTL = 1500 * time.Millisecond
	h, err := st.Lock(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * st.lockTTL)
	var locked *backupset.LockedError
	if _, err := st.Lock(t.Context(), 0); !errors.As(err, &locked) || locked.Host == "" || locked.Pid == 0 {
		t.Errorf("Lock of a renewed lock: %v, want a LockedError naming host and pid", err)
	}
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Stat(t.Context(), backupset.LockName); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("lock object after Release: %v, want none", err)
	}
}

// TestRacingUploads completes several uploads to one name at once: exactly one object is
// created, the others fail with ErrExists and leave no parts behind.
func TestRacingUploads(t *testing.T) {
	srv := s3test.Start(t)
	srv.SetEnv(t)
	st := newStore(t, srv)
	const name = "app-20260101T000000Z.zip"
	errs := race(5, func() error {
		u, err := st.Create(t.Context(), name)
		if err != nil {
			return err
		}
		u.Write(bytes.Repeat([]byte("x"), 100))
		_, err = u.Commit()
		return err
	})
	if winners(errs) != 1 {
		t.Fatalf("%v; want exactly one upload to win", errs)
	}
	for _, err := range errs {
		if err != nil && !errors.Is(err, backupset.ErrExists) {
			t.Errorf("loser: %v, want ErrExists", err)
		}
	}
	if aborted, err := st.Clean(t.Context()); err != nil || len(aborted) != 0 {
		t.Errorf("Clean after the race: %q, %v; want no upload left", aborted, err)
	}
}

// TestCleanAbortsAbandonedUpload leaves an upload unfinished, as a killed run does: nothing
// is at the name, and Clean aborts it.
func TestCleanAbortsAbandonedUpload(t *testing.T) {
	srv := s3test.Start(t)
	srv.SetEnv(t)
	st := newStore(t, srv)
	const name = "app-20260101T000000Z.zip"
	u, err := st.Create(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	u.Write(bytes.Repeat([]byte("y"), basePart+10)) // one part sent
	u.wg.Wait()
	if _, err := st.Stat(t.Context(), name); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("object of an unfinished upload: %v, want none", err)
	}
	aborted, err := st.Clean(t.Context())
	if err != nil || len(aborted) != 1 || aborted[0] != name {
		t.Errorf("Clean: %q, %v; want %s aborted", aborted, err, name)
	}
	if aborted, err := st.Clean(t.Context()); err != nil || len(aborted) != 0 {
		t.Errorf("second Clean: %q, %v; want nothing left", aborted, err)
	}
}

// TestLockLostWhileStalledIsConfirmedLost: a run that stalls past its lease (its renewals
// stop: a suspended machine, a stopped process) has its lock taken over by another run, and
// until now learned so only when it released the lock, after it had moved LATEST and pruned
// beside the run that held the set. Confirm, which Activate asks before LATEST moves, says
// the lock is lost; a lock that is renewed is confirmed.
func TestLockLostWhileStalledIsConfirmedLost(t *testing.T) {
	srv := s3test.Start(t)
	srv.SetEnv(t)
	stalled := newStore(t, srv)
	other, err := Open(t.Context(), stalled.Location(), Options{PathStyle: true})
	if err != nil {
		t.Fatal(err)
	}
	stalled.lockTTL, other.lockTTL = 1500*time.Millisecond, 1500*time.Millisecond
	held, err := stalled.Lock(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	h := held.(*heldLock)
	h.stop() // its renewals stop, as in a process stopped
	<-h.done
	time.Sleep(2 * stalled.lockTTL)
	took, err := other.Lock(t.Context(), 0)
	if err != nil {
		t.Fatalf("Lock of a lease unrenewed past its TTL: %v", err)
	}
	if err := h.Confirm(t.Context()); !errors.Is(err, errTakenOver) {
		t.Errorf("Confirm of a lock another run took over: %v, want %v", err, errTakenOver)
	}
	time.Sleep(other.lockTTL) // past a renewal's due time: Confirm renews now
	if err := took.(*heldLock).Confirm(t.Context()); err != nil {
		t.Errorf("Confirm of the lock that took it over: %v", err)
	}
	if err := took.Release(); err != nil {
		t.Fatal(err)
	}
}
