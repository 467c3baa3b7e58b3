package archive

import (
	"bytes"
	"io"
	"testing"
)

// TestHoldIn: an entry is held when it fits in a spool and the budget has room, taking its
// length from the budget until released; a short read holds nothing and takes nothing.
func TestHoldIn(t *testing.T) {
	cfg := newSpoolConfig(t.TempDir(), 100, 150)
	data := bytes.Repeat([]byte("x"), 100)
	a, err := holdIn(cfg, bytes.NewReader(data), 100)
	if err != nil || a == nil || !bytes.Equal(a.data, data) {
		t.Fatalf("holdIn(100 of 150) = %v, %v", a, err)
	}
	if b, err := holdIn(cfg, bytes.NewReader(data), 60); b != nil || err != nil {
		t.Errorf("holdIn(60) with 50 left = %v, %v; want nothing held", b, err)
	}
	if b, err := holdIn(cfg, bytes.NewReader(data), 101); b != nil || err != nil {
		t.Errorf("holdIn(101), over a spool's limit = %v, %v; want nothing held", b, err)
	}
	if b, err := holdIn(cfg, bytes.NewReader(data[:10]), 20); b != nil || err != io.ErrUnexpectedEOF {
		t.Errorf("holdIn of a short reader = %v, %v; want %v", b, err, io.ErrUnexpectedEOF)
	}
	if got := cfg.budget.Load(); got != 50 {
		t.Errorf("budget %d while 100 bytes are held, want 50", got)
	}
	a.release()
	if got := cfg.budget.Load(); got != 150 {
		t.Errorf("budget %d once released, want 150", got)
	}
	c, err := holdIn(cfg, bytes.NewReader(data), 70)
	if err != nil || c == nil || !bytes.Equal(c.data, data[:70]) {
		t.Fatalf("holdIn(70) after a release = %v, %v", c, err)
	}
	c.release()
}
