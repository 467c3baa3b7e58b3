package archive

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"backup/format"
)

// damagedArchive has enough entries for the workers of a parallel check to finish out of
// archive order, and problems of every kind among them, one entry with two.
func damagedArchive(t *testing.T) []byte {
	t.Helper()
	entries := []zent{{name: "d/"}, {name: "d/../evil", body: "x"}}
	for i := range 40 {
		line := fmt.Sprintf("line %d of a file that deflates\n", i)
		entries = append(entries, zent{name: fmt.Sprintf("d/f%02d", i),
			body: strings.Repeat(line, 300*(i%5+1)), store: i%7 == 0})
	}
	data := withManifest(t, entries, func(m *format.Manifest) {
		// m.Files[0] is d/../evil; d/fNN is m.Files[NN+1].
		m.Files[4].Size++
		m.Files[11].SHA256 = digest(goodSum)
		m.Files = slices.Delete(m.Files, 21, 22)
		m.Files = append(m.Files, format.File{Path: "d/gone", Size: 1, SHA256: digest(goodSum)})
	})
	for _, name := range []string{"d/f03", "d/f05", "d/f14", "d/f33"} {
		data = flipByteIn(t, data, name)
	}
	return data
}

func TestVerifyParallelSameAsSequential(t *testing.T) {
	path := writeZip(t, damagedArchive(t))
	want, err := Verify(t.Context(), path, VerifyOptions{Jobs: 1})
	if err != nil {
		t.Fatal(err)
	}
	// The sequential result is right, so that comparing with it means something.
	wantPrefixes := []string{
		`d/../evil: unsafe name`,
		"d/f03: size 37200, the manifest says 37201",
		"d/f03: ", // the flipped byte
		"d/f05: ",
		"d/f10: sha256 mismatch",
		"d/f14: crc-32 mismatch", // stored
		"d/f20: not in the manifest",
		"d/f33: ",
		"d/gone: in the manifest but missing from the archive",
	}
	got := problemStrings(want.Problems)
	if len(got) != len(wantPrefixes) {
		t.Fatalf("Jobs 1: problems %q, want %d", got, len(wantPrefixes))
	}
	for i, p := range wantPrefixes {
		if !strings.HasPrefix(got[i], p) {
			t.Errorf("Jobs 1: problem %d is %q, want it to start %q", i, got[i], p)
		}
	}
	for _, jobs := range []int{0, 2, 3, 8, 64} {
		t.Run(fmt.Sprintf("jobs-%d", jobs), func(t *testing.T) {
			for range 20 { // scheduling differs from run to run; the result must not
				res, err := Verify(t.Context(), path, VerifyOptions{Jobs: jobs})
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(res, want) {
					t.Fatalf("got %+v\nwant %+v", res, want)
				}
			}
		})
	}
}

// cancellingReaderAt cancels a context at its limit-th read once armed, and counts the reads
// made after that.
type cancellingReaderAt struct {
	*bytes.Reader
	cancel context.CancelFunc
	limit  int64
	armed  atomic.Bool
	reads  atomic.Int64
}

func (c *cancellingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if c.armed.Load() && c.reads.Add(1) == c.limit {
		c.cancel()
	}
	return c.Reader.ReadAt(p, off)
}

func TestVerifyCancelled(t *testing.T) {
	var entries []zent
	for i := range 200 {
		entries = append(entries, zent{name: fmt.Sprintf("f%03d", i), body: string(textData(64<<10 + i))})
	}
	entries = append(entries, zent{name: "big", body: string(textData(8 << 20))})
	data := buildZip(t, entries, true)
	sum := sha256.Sum256(data)
	expect := &format.Summary{Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
	// The reads of a whole check, to cancel at a read that is surely made: small entries
	// are read a span of neighbours at a time, the large one (last) in many reads.
	reads := func(opts VerifyOptions) int64 {
		ra := &cancellingReaderAt{Reader: bytes.NewReader(data), cancel: func() {}}
		r, err := NewReader(ra, int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		ra.armed.Store(true)
		if _, err := r.Verify(t.Context(), opts); err != nil {
			t.Fatal(err)
		}
		return ra.reads.Load()
	}
	tests := []struct {
		name  string
		jobs  int
		limit int64
		opts  VerifyOptions
	}{
		{"among small entries", 4, 3, VerifyOptions{Jobs: 4}},
		{"with the archive hash", 4, 3, VerifyOptions{Jobs: 4, Expect: expect}},
		{"in the large entry", 2, reads(VerifyOptions{Jobs: 2}) - 8, VerifyOptions{Jobs: 2}},
		{"one worker", 1, 3, VerifyOptions{Jobs: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			ra := &cancellingReaderAt{Reader: bytes.NewReader(data), cancel: cancel, limit: tt.limit}
			r, err := NewReader(ra, int64(len(data)))
			if err != nil {
				t.Fatal(err)
			}
			before := runtime.NumGoroutine()
			ra.armed.Store(true)
			res, err := r.Verify(ctx, tt.opts)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Verify: %v, %v; want context.Canceled", res, err)
			}
			// Each worker may finish the read it is in, and its buffered reader one more.
			if after := ra.reads.Load() - tt.limit; after > int64(4*tt.jobs+2) {
				t.Errorf("%d reads after the cancel, want at most %d", after, 4*tt.jobs+2)
			}
			waitGoroutines(t, before)
		})
	}
}

// waitGoroutines fails unless the number of goroutines is back to n within 2 s: a worker
// that outlives the call would be a leak.
func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines after the call returned, want %d", runtime.NumGoroutine(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestVerifyCancelledBefore(t *testing.T) {
	path := writeZip(t, buildZip(t, sampleTree, true))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	before := runtime.NumGoroutine()
	sum := format.Summary{Size: 1, SHA256: goodSum}
	if _, err := Verify(ctx, path, VerifyOptions{Expect: &sum}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Verify: %v, want context.Canceled", err)
	}
	waitGoroutines(t, before)
}

// TestVerifyProgress: the counters a caller polls end at the totals, whatever the number of
// workers; damaged entries count as checked too.
func TestVerifyProgress(t *testing.T) {
	path := writeZip(t, damagedArchive(t))
	for _, jobs := range []int{1, 4} {
		t.Run(fmt.Sprintf("jobs-%d", jobs), func(t *testing.T) {
			var p VerifyProgress
			res, err := Verify(t.Context(), path, VerifyOptions{Jobs: jobs, Progress: &p})
			if err != nil {
				t.Fatal(err)
			}
			entries := int64(res.Files + res.Dirs + res.Other)
			if p.TotalEntries.Load() != entries || p.Entries.Load() != entries {
				t.Errorf("entries: %d of %d checked, want %d of %d", p.Entries.Load(), p.TotalEntries.Load(), entries, entries)
			}
			if p.TotalBytes.Load() == 0 || p.Bytes.Load() != p.TotalBytes.Load() {
				t.Errorf("bytes: %d of %d, want all of a total above 0", p.Bytes.Load(), p.TotalBytes.Load())
			}
		})
	}
}
