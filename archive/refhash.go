package archive

import (
	"crypto/sha256"
	"hash"
	"sync/atomic"
)

// passHash takes the SHA-256 of what the pass over a reference reads, on a goroutine of its
// own: the pass checks headers and keys entries on one core while the SHA-256, most of its
// CPU time, runs on another (an unchanged set run of the bench corpus waited 0.3 s on one
// core to open its reference). Chunks are hashed in the order they are given; a chunk's
// bytes must stay as they are until hashed says so.
type passHash struct {
	h    hash.Hash
	in   chan []byte
	sent int
	// done counts the chunks hashed; kick wakes a wait when it moves.
	done atomic.Int64
	kick chan struct{}
	over chan struct{} // closed when the goroutine has hashed the last chunk
}

func newPassHash() *passHash {
	p := &passHash{h: sha256.New(), in: make(chan []byte, 4), kick: make(chan struct{}, 1), over: make(chan struct{})}
	go p.run(p.in)
	return p
}

func (p *passHash) run(in <-chan []byte) {
	defer close(p.over)
	for b := range in {
		p.h.Write(b)
		p.done.Add(1)
		select {
		case p.kick <- struct{}{}:
		default:
		}
	}
}

// add hands the chunk b to the hash and returns its number, for hashed.
func (p *passHash) add(b []byte) int {
	p.in <- b
	p.sent++
	return p.sent
}

// hashed waits until the chunks up to number n are hashed.
func (p *passHash) hashed(n int) {
	for p.done.Load() < int64(n) {
		<-p.kick
	}
}

// sum stops the hash and returns the SHA-256 of every chunk given.
func (p *passHash) sum() []byte {
	p.stop()
	return p.h.Sum(nil)
}

// stop ends the goroutine once it has hashed what it was given; the chunks may then be
// reused. Called more than once, it does nothing more.
func (p *passHash) stop() {
	if p.in != nil {
		close(p.in)
		p.in = nil
		<-p.over
	}
}
