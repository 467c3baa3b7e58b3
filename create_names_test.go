package main

import (
	"strings"
	"testing"
	"time"

	"backup/backupset"
	"backup/backupset/s3store"
	"backup/backupset/s3store/s3test"
	"backup/engine"
	"backup/format"
)

// TestRunNamesPassFreedNames: a run into a set, in a folder or in a bucket alike, takes the
// default name of its second that no run of that second had: -2 after one run, and once a
// prune has freed the first name but kept the second, -3, never the first again (it would
// sort before the run it followed). Before, a set in a bucket took the freed name again: its
// picker asked only whether each name was free, not past which run to start (NextRun).
// Not parallel: the store reads its credentials from the environment.
func TestRunNamesPassFreedNames(t *testing.T) {
	srv := s3test.Start(t)
	srv.SetEnv(t)
	bucket, err := s3store.Open(t.Context(), "s3://"+srv.Bucket(t)+"/sets/app", s3store.Options{PathStyle: true})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 400, time.UTC)
	name := func(n int) string { return backupset.ArchiveName("app", now, n) }
	for _, st := range []backupset.Store{backupset.Folder{Dir: t.TempDir()}, bucket} {
		t.Run(strings.SplitN(st.Location(), ":", 2)[0], func(t *testing.T) {
			cfg := createConfig{outputDir: st.Location(), sources: []engine.Source{{Path: "/srv/app", Name: "app"}},
				set: &setConfig{dir: st.Location(), store: st}}
			pick := func() string {
				t.Helper()
				out, err := cfg.pickOutput(t.Context(), now)
				if err != nil {
					t.Fatal(err)
				}
				if out.receipt != out.archive+format.ReceiptSuffix {
					t.Errorf("receipt %s beside archive %s", out.receipt, out.archive)
				}
				return strings.TrimPrefix(out.archive, st.Location()+"/")
			}
			etags := map[string]string{}
			put := func(names ...string) {
				t.Helper()
				for _, n := range names {
					if etags[n], err = st.Put(t.Context(), n, []byte("x"), ""); err != nil {
						t.Fatal(err)
					}
				}
			}
			if got := pick(); got != name(1) {
				t.Errorf("first run of the second: %s, want %s", got, name(1))
			}
			put(name(1), name(1)+format.ReceiptSuffix)
			if got := pick(); got != name(2) {
				t.Errorf("second run of the second: %s, want %s", got, name(2))
			}
			put(name(2), name(2)+format.ReceiptSuffix)
			for _, n := range []string{name(1), name(1) + format.ReceiptSuffix} { // as prune does
				if err := st.Delete(t.Context(), n, etags[n]); err != nil {
					t.Fatal(err)
				}
			}
			if got := pick(); got != name(3) {
				t.Errorf("third run of the second, the first pruned: %s, want %s", got, name(3))
			}
		})
	}
}
