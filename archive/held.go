package archive

import (
	"io"
	"math/bits"
	"sync"
)

// A reused entry's compressed bytes are read once after the pass over the reference: by the
// worker that checks their keyed digest, which holds what it checked for the writer to write
// (see checkReused). Read again by the writer, they cost a second pread and digest per entry
// on the goroutine every entry waits for.

// heldEntry is the checked bytes of one reused entry, in a pooled buffer (heldEntries), their length
// taken from the spools' budget until released.
type heldEntry struct {
	data []byte
	cfg  *spoolConfig
}

// heldEntries keeps released held entries, by the size class of their buffer (class c:
// capacity 1<<c), so that a run reusing thousands of entries does not allocate a buffer
// for each.
var heldEntries [bits.UintSize]sync.Pool

// holdIn reads the n bytes r holds into a pooled buffer, when the budget has room for
// them and they fit in one spool; nil, and nothing read, when they do not.
func holdIn(cfg *spoolConfig, r io.Reader, n int64) (*heldEntry, error) {
	if n > int64(cfg.limit) || !cfg.take(int(n)) {
		return nil, nil
	}
	class := bits.Len(uint(n))
	h, _ := heldEntries[class].Get().(*heldEntry)
	if h == nil {
		h = &heldEntry{data: make([]byte, 1<<class)}
	}
	h.data, h.cfg = h.data[:n], cfg
	if _, err := io.ReadFull(r, h.data); err != nil {
		h.release()
		return nil, err
	}
	return h, nil
}

// release gives back the budget, and h for reuse.
func (h *heldEntry) release() {
	h.cfg.budget.Add(int64(len(h.data)))
	heldEntries[bits.Len(uint(cap(h.data)))-1].Put(h)
}
