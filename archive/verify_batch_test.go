package archive

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"

	"backup/format"
)

// failingAt reads data, but fails every read that reaches byte bad, as an encrypted
// archive's damaged chunk does: the bytes before it are returned with the error.
type failingAt struct {
	data []byte
	bad  int64
}

var errBadChunk = errors.New("chunk fails authentication")

func (f failingAt) ReadAt(p []byte, off int64) (int, error) {
	size := int64(len(f.data))
	if off+int64(len(p)) > f.bad {
		n := copy(p, f.data[min(off, size):max(min(off, size), min(f.bad, size))])
		return n, errBadChunk
	}
	n := copy(p, f.data[min(off, size):])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// TestReadAheadAnswersAsTheArchive: whatever was read ahead, and however that read ended,
// every read gives what a read of the archive itself gives: the same bytes, count and error.
func TestReadAheadAnswersAsTheArchive(t *testing.T) {
	data := []byte(strings.Repeat("0123456789abcdef", 64)) // 1 KiB
	sources := map[string]io.ReaderAt{
		"whole":             bytes.NewReader(data),
		"fails at byte 600": failingAt{data: data, bad: 600},
		"fails at byte 100": failingAt{data: data, bad: 100},
	}
	spans := [][2]int64{{0, 1024}, {200, 700}, {900, 1024}, {900, 2000}, {1024, 1100}}
	reads := [][2]int64{{0, 10}, {200, 100}, {250, 450}, {199, 10}, {650, 100}, {600, 1}, {1000, 24}, {1000, 30}, {1024, 1}, {1100, 5}}
	for name, src := range sources {
		for _, span := range spans {
			var ahead readAhead
			job := entryJob{entry: &Entry{local: localRef{ra: src}}}
			ra := ahead.load(t.Context(), batch{jobs: []entryJob{job}, lo: span[0], hi: span[1]})
			for _, rd := range reads {
				got, want := make([]byte, rd[1]), make([]byte, rd[1])
				gn, gerr := ra.ReadAt(got, rd[0])
				wn, werr := src.ReadAt(want, rd[0])
				if gn != wn || gerr != werr || !bytes.Equal(got[:gn], want[:wn]) {
					t.Errorf("%s, span %v: ReadAt(%d bytes at %d) = %d, %v; the archive gives %d, %v", name, span, rd[1], rd[0], gn, gerr, wn, werr)
				}
			}
		}
	}
}

// TestReadAheadNotWhenDone: once the check is cancelled, nothing more is read ahead.
func TestReadAheadNotWhenDone(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	src := &cancellingReaderAt{Reader: bytes.NewReader(make([]byte, 4096))}
	src.armed.Store(true)
	var ahead readAhead
	ra := ahead.load(ctx, batch{jobs: []entryJob{{entry: &Entry{local: localRef{ra: src}}}}, lo: 0, hi: 4096})
	if ra != io.ReaderAt(src) || src.reads.Load() != 0 {
		t.Errorf("after the cancel: %d reads, reader %T; want none, and the archive's own reader", src.reads.Load(), ra)
	}
}

// TestBatches: the batches keep archive order, span at most spanMax with at most batchMax
// entries, and an entry too large to share one goes alone.
func TestBatches(t *testing.T) {
	var entries []zent
	for i := range 3000 {
		switch {
		case i%700 == 5:
			entries = append(entries, zent{name: fmt.Sprintf("big%d", i), body: string(randomData(spanMax)), store: true})
		case i%13 == 0:
			entries = append(entries, zent{name: fmt.Sprintf("d%d/", i)})
		default:
			entries = append(entries, zent{name: fmt.Sprintf("f%d", i), body: string(textData(1 + i%5000))})
		}
	}
	r := openZip(t, buildZip(t, entries, false))
	work := make(chan batch, len(r.Entries))
	b := &batcher{ctx: t.Context(), work: work}
	for i, e := range r.Entries {
		b.add(entryJob{index: i, entry: e})
	}
	b.close()
	var order []int
	for bt := range work {
		if len(bt.jobs) > batchMax || bt.hi-bt.lo > spanMax {
			t.Errorf("a batch of %d entries spans %d bytes; want at most %d and %d", len(bt.jobs), bt.hi-bt.lo, batchMax, spanMax)
		}
		for _, job := range bt.jobs {
			order = append(order, job.index)
			e := job.entry
			if strings.HasPrefix(e.Name, "big") && (len(bt.jobs) > 1 || bt.hi != bt.lo) {
				t.Errorf("%s is in a batch of %d read ahead [%d, %d); want it alone", e.Name, len(bt.jobs), bt.lo, bt.hi)
			}
			if lo, hi, near := entrySpan(e); near && (lo < bt.lo || hi > bt.hi) {
				t.Errorf("%s lies at [%d, %d), outside its batch's [%d, %d)", e.Name, lo, hi, bt.lo, bt.hi)
			}
		}
	}
	if want := slices.Collect(func(yield func(int) bool) {
		for i := range r.Entries {
			yield(i)
		}
	}); !reflect.DeepEqual(order, want) {
		t.Errorf("the batches hand out %d entries out of order", len(order))
	}
}

// TestVerifyReadsFewTimes: small entries are read a span of neighbours at a time, not a
// local header and then data each (two reads an entry, or two requests from a bucket).
func TestVerifyReadsFewTimes(t *testing.T) {
	var entries []zent
	for i := range 2000 {
		entries = append(entries, zent{name: fmt.Sprintf("d%d/f%d", i/100, i), body: string(textData(1 + i%3000))})
	}
	data := buildZip(t, entries, true)
	for _, jobs := range []int{1, 4} {
		ra := &cancellingReaderAt{Reader: bytes.NewReader(data), cancel: func() {}}
		r, err := NewReader(ra, int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		ra.armed.Store(true)
		res, err := r.Verify(t.Context(), VerifyOptions{Jobs: jobs})
		if err != nil || !res.OK() {
			t.Fatalf("Verify: %v %q", err, problemStrings(res.Problems))
		}
		// The archive is about 1.6 MB: a read per span and a few at its edges.
		if n := ra.reads.Load(); n > int64(len(data)/spanMax+4*jobs+8) {
			t.Errorf("jobs %d: %d reads for %d entries of %d bytes in all", jobs, n, len(entries), len(data))
		}
	}
}

// centralOffsets returns where the local-header offset of each central directory record
// of the zip data is stored.
func centralOffsets(t testing.TB, data []byte) []int {
	t.Helper()
	var at []int
	for i := bytes.Index(data, []byte("PK\x01\x02")); i >= 0; {
		at = append(at, i+42)
		j := bytes.Index(data[i+4:], []byte("PK\x01\x02"))
		if j < 0 {
			break
		}
		i += 4 + j
	}
	if len(at) == 0 {
		t.Fatal("no central directory records")
	}
	return at
}

// layoutArchives are archives whose entries do not lie one after the other as a writer
// puts them: records that point at another entry's local header, or past the end of the
// file, and entries of every size, some with data descriptors.
func layoutArchives(t testing.TB) map[string][]byte {
	var entries []zent
	for i := range 60 {
		size := 1 + i*i*37
		if i%17 == 3 {
			size = 300 << 10 // larger than half a span: alone
		}
		entries = append(entries, zent{name: fmt.Sprintf("d/f%02d", i), body: string(textData(size)), store: i%5 == 0})
	}
	good := buildZip(t, entries, true)
	at := centralOffsets(t, good)
	same := bytes.Clone(good)
	for _, k := range []int{4, 9, 30} {
		binary.LittleEndian.PutUint32(same[at[k]:], binary.LittleEndian.Uint32(same[at[k-1]:])) // its neighbour's local header
	}
	back := bytes.Clone(good)
	binary.LittleEndian.PutUint32(back[at[40]:], binary.LittleEndian.Uint32(back[at[2]:])) // far back
	past := bytes.Clone(good)
	binary.LittleEndian.PutUint32(past[at[20]:], uint32(len(past)+100))
	binary.LittleEndian.PutUint32(past[at[21]:], uint32(len(past)-10))
	return map[string][]byte{"good": good, "pointing at a neighbour": same, "pointing far back": back, "past the end": past}
}

// TestVerifyBatchedSameAsOneByOne: reading entries in batches finds what reading them one
// at a time finds, in the same words, whatever the archive's layout and its damage.
func TestVerifyBatchedSameAsOneByOne(t *testing.T) {
	for name, data := range hostileArchives(t) {
		t.Run(name, func(t *testing.T) {
			want := verifyBytes(t, data, VerifyOptions{Jobs: 1, oneByOne: true})
			if name != "good" && len(want.Problems) == 0 {
				t.Fatal("no problems found: the comparison would mean little")
			}
			for _, jobs := range []int{1, 4} {
				if got := verifyBytes(t, data, VerifyOptions{Jobs: jobs}); !reflect.DeepEqual(got, want) {
					t.Errorf("jobs %d, in batches:\n%q\nwant, one by one:\n%q", jobs, problemStrings(got.Problems), problemStrings(want.Problems))
				}
			}
		})
	}
}

// hostileArchives are layoutArchives, damagedArchive and largeLastArchive, by name.
func hostileArchives(t *testing.T) map[string][]byte {
	archives := layoutArchives(t)
	archives["damaged"] = damagedArchive(t)
	archives["large ones last"] = largeLastArchive(t)
	return archives
}

// largeLastArchive has small entries, then large ones (sent to the workers first: see
// verify_early.go): one the manifest gives another SHA-256, one of another size, one with a
// flipped byte.
func largeLastArchive(t *testing.T) []byte {
	t.Helper()
	var entries []zent
	for i := range 30 {
		entries = append(entries, zent{name: fmt.Sprintf("a/f%02d", i), body: string(textData(100 + i*500))})
	}
	for i := range 6 {
		entries = append(entries, zent{name: fmt.Sprintf("z/big%d", i), body: string(randomData(200<<10 + i)), store: i%2 == 0})
	}
	data := withManifest(t, entries, func(m *format.Manifest) {
		for i := range m.Files {
			switch m.Files[i].Path {
			case "z/big1":
				m.Files[i].SHA256 = digest(goodSum)
			case "z/big3":
				m.Files[i].Size++
			}
		}
	})
	return flipByteIn(t, data, "z/big4")
}

func verifyBytes(t testing.TB, data []byte, opts VerifyOptions) *VerifyResult {
	t.Helper()
	r, err := NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Verify(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// FuzzVerifyBatched: for any archive, reading entries in batches finds what reading them
// one at a time finds.
func FuzzVerifyBatched(f *testing.F) {
	f.Add(buildZip(f, []zent{{name: "a", body: "alpha"}, {name: "d/"}, {name: "d/b", body: strings.Repeat("b", 3000)}}, true))
	f.Add(buildZip(f, []zent{{name: "x", body: "x", store: true}, {name: "y", body: "yy"}}, false))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		want, err := r.Verify(context.Background(), VerifyOptions{Jobs: 1, oneByOne: true})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := r.Verify(context.Background(), VerifyOptions{Jobs: 3}); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("in batches: %v %q\none by one: %q", err, problemStrings(got.Problems), problemStrings(want.Problems))
		}
	})
}

// TestSendEarly: the entries holding more than 1/(4 jobs) of the archive go first, largest
// first, each alone; none with one job, or one by one.
func TestSendEarly(t *testing.T) {
	r := openZip(t, largeLastArchive(t))
	for _, tt := range []struct {
		jobs     int
		oneByOne bool
		want     []string
	}{
		{4, false, []string{"z/big5", "z/big3", "z/big1", "z/big4", "z/big2", "z/big0"}},
		{1, false, nil},
		{4, true, nil},
	} {
		work := make(chan batch, 64)
		early, ok := r.sendEarly(&batcher{ctx: t.Context(), work: work, oneByOne: tt.oneByOne}, tt.jobs)
		close(work)
		var got []string
		for b := range work {
			if len(b.jobs) != 1 || b.jobs[0].late != early[b.jobs[0].index] {
				t.Errorf("jobs %d: a batch of %d sent early, want each alone with its want", tt.jobs, len(b.jobs))
			}
			got = append(got, b.jobs[0].entry.Name)
		}
		if !ok || !slices.Equal(got, tt.want) || len(early) != len(tt.want) {
			t.Errorf("jobs %d, one by one %v: sent early %q (%d wants, %v), want %q", tt.jobs, tt.oneByOne, got, len(early), ok, tt.want)
		}
	}
}

// TestCheckHeadersAllSameAsOneByOne: the headers checked in spans get the verdict each gets
// checked alone, in the same words, whatever the archive's layout and damage; and a good
// archive of small entries is read a span at a time, not an entry at a time.
func TestCheckHeadersAllSameAsOneByOne(t *testing.T) {
	archives := layoutArchives(t)
	archives["damaged"] = damagedArchive(t)
	var small []zent
	for i := range 2000 {
		small = append(small, zent{name: fmt.Sprintf("d%d/f%d", i/100, i), body: string(textData(1 + i%3000))})
	}
	archives["small"] = buildZip(t, small, true)
	// Local headers damaged in the midst of spans: a signature, a name, a method.
	bad := bytes.Clone(archives["small"])
	for k, at := range localHeaderOffsets(bad)[100:400:400] {
		switch k % 3 {
		case 0:
			bad[at] = 'X'
		case 1:
			bad[at+localLen]++
		case 2:
			bad[at+8] = 99
		}
	}
	archives["local headers damaged"] = bad
	for name, data := range archives {
		t.Run(name, func(t *testing.T) {
			ra := &cancellingReaderAt{Reader: bytes.NewReader(data), cancel: func() {}}
			r, err := NewReader(ra, int64(len(data)))
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, e := range r.Entries {
				want = append(want, fmt.Sprint(e.StoredName(), ": ", e.CheckHeaders()))
			}
			ra.reads.Store(0)
			ra.armed.Store(true)
			var got []string
			CheckHeadersAll(context.Background(), r.Entries, func(e *Entry, err error) { got = append(got, fmt.Sprint(e.StoredName(), ": ", err)) })
			if !slices.Equal(got, want) {
				t.Errorf("in spans:\n%q\nwant, one by one:\n%q", got, want)
			}
			if n := ra.reads.Load(); name == "small" && n > int64(len(data)/spanMax+2) {
				t.Errorf("%d reads for %d entries of %d bytes in all", n, len(r.Entries), len(data))
			}
			if name != "good" && name != "small" && name != "damaged" && !slices.ContainsFunc(want, func(s string) bool { return !strings.HasSuffix(s, ": <nil>") }) {
				t.Error("no header found damaged: the comparison would mean little")
			}
		})
	}
}

// localHeaderOffsets returns where each local header of the zip data starts, in order.
func localHeaderOffsets(data []byte) []int {
	var at []int
	for i := 0; ; {
		j := bytes.Index(data[i:], []byte("PK\x03\x04"))
		if j < 0 {
			return at
		}
		at = append(at, i+j)
		i += j + 4
	}
}

// TestCopyCheckedInSpanSameAsAlone: an entry read through the span of its run gives the
// bytes, count and verdict it gives read alone, whatever the archive's layout and damage.
func TestCopyCheckedInSpanSameAsAlone(t *testing.T) {
	for name, data := range hostileArchives(t) {
		t.Run(name, func(t *testing.T) {
			r, err := NewReader(bytes.NewReader(data), int64(len(data)))
			if err != nil {
				t.Fatal(err)
			}
			copyOf := func(s *Span, e *Entry) string {
				var out bytes.Buffer
				n, err := r.CopyCheckedIn(s, &out, e, make([]byte, 4096))
				return fmt.Sprintf("%s: %d %v %x", e.StoredName(), n, err, sha256.Sum256(out.Bytes()))
			}
			var want, got []string
			for _, e := range r.Entries {
				want = append(want, copyOf(nil, e))
			}
			var s Span
			for i := 0; i < len(r.Entries); {
				j := NextSpan(r.Entries, i)
				s.Set(r.Entries[i:j])
				for _, e := range r.Entries[i:j] {
					got = append(got, copyOf(&s, e))
				}
				i = j
			}
			if !slices.Equal(got, want) {
				t.Errorf("through spans:\n%q\nwant, alone:\n%q", got, want)
			}
		})
	}
}
