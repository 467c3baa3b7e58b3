package s3store

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"backup/backupset"
)

// Ranged reads go by blocks: a zip reader asks for a few bytes at a time (an end record, a
// 4 KiB buffer of the central directory, a local header), and a GET per ask would cost a
// round trip each. A block is fetched whole and the last few are kept.
const (
	blockSize  = 1 << 20
	blocksKept = 8 // per opened object: 8 MiB
)

// Open opens an object for ranged reads. Each block is one GET, made only while the object
// keeps the ETag it had when opened, so an archive replaced underneath a reader is an error
// rather than a mix of two archives. Reads may run in parallel (verify does). With
// Options.SpoolDir, and once Spool is called, a block read again comes from the spool (see
// spool.go).
func (s *Store) Open(ctx context.Context, name string) (backupset.File, error) {
	o, err := s.Stat(ctx, name)
	if err != nil {
		return nil, err
	}
	return &Object{s: s, ctx: ctx, name: name, size: o.Size, etag: o.ETag}, nil
}

// Object is an object opened for ranged reads.
type Object struct {
	s       *Store
	ctx     context.Context
	name    string
	size    int64
	etag    string
	fetched atomic.Int64

	mu       sync.Mutex
	blocks   []block // most recently used last
	fetching map[int64]*fetching
	spool    *spool // every block fetched, on disk; nil when none
	closed   bool   // no spool is made after Close
}

// Spool keeps the blocks fetched from now on in a spool in Options.SpoolDir, while its file
// system keeps reserve bytes free besides: what the caller is about to write there, for a
// restore whose destination is on the same disk must not find it filled by the spool. No
// spool without Options.SpoolDir, nor for an object the blocks kept in memory hold whole.
// The blocks kept in memory go into the spool at once: they hold what the caller read
// before (the central directory, the manifest), which a restore reads again.
func (o *Object) Spool(reserve int64) {
	sp := newSpool(o.s.spoolDir, o.size, reserve)
	if sp == nil {
		return
	}
	o.mu.Lock()
	if o.spool != nil || o.closed {
		o.mu.Unlock()
		sp.close()
		return
	}
	o.spool = sp
	kept := slices.Clone(o.blocks)
	o.mu.Unlock()
	for _, b := range kept {
		sp.put(b.index, b.data)
	}
}

type block struct {
	index int64
	data  []byte
}

// Size returns the object's size.
func (o *Object) Size() int64 { return o.size }

// Close lets the kept blocks and the spool go.
func (o *Object) Close() error {
	o.mu.Lock()
	o.blocks, o.closed = nil, true
	sp := o.spool
	o.mu.Unlock()
	sp.close()
	return nil
}

// Fetched returns how many bytes the reads of this object have received from the server.
func (o *Object) Fetched() int64 { return o.fetched.Load() }

// ReadAt reads from the blocks that hold p's range.
func (o *Object) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) && off+int64(n) < o.size {
		at := off + int64(n)
		b, err := o.block(at / blockSize)
		if err != nil {
			return n, err
		}
		n += copy(p[n:], b[at%blockSize:])
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// block returns block i, from those kept, the spool or the server. Readers that ask for
// a block being fetched wait for that fetch: verify's hash and its workers, which read the
// same blocks at about the same time, fetched many of them twice.
func (o *Object) block(i int64) ([]byte, error) {
	o.mu.Lock()
	for j, b := range o.blocks {
		if b.index == i {
			o.blocks = append(slices.Delete(o.blocks, j, j+1), b)
			o.mu.Unlock()
			return b.data, nil
		}
	}
	if f, ok := o.fetching[i]; ok {
		o.mu.Unlock()
		<-f.done
		return f.data, f.err
	}
	f := &fetching{done: make(chan struct{})}
	if o.fetching == nil {
		o.fetching = map[int64]*fetching{}
	}
	o.fetching[i] = f
	sp := o.spool
	o.mu.Unlock()
	f.data = sp.get(i)
	if f.data == nil {
		f.data, f.err = o.fetch(i*blockSize, min(blockSize, o.size-i*blockSize))
		if f.err == nil {
			sp.put(i, f.data)
		}
	}
	o.mu.Lock()
	delete(o.fetching, i)
	if f.err == nil {
		if len(o.blocks) == blocksKept {
			o.blocks = slices.Delete(o.blocks, 0, 1)
		}
		o.blocks = append(o.blocks, block{i, f.data})
	}
	o.mu.Unlock()
	close(f.done)
	return f.data, f.err
}

// fetching is a block being read from the spool or the server, for the readers that wait.
type fetching struct {
	done chan struct{}
	data []byte
	err  error
}

// fetch GETs n bytes from off.
func (o *Object) fetch(off, n int64) ([]byte, error) {
	in := &s3.GetObjectInput{
		Bucket: aws.String(o.s.bucket), Key: aws.String(o.s.key(o.name)),
		Range:   aws.String(fmt.Sprintf("bytes=%d-%d", off, off+n-1)),
		IfMatch: aws.String(o.etag),
	}
	data := make([]byte, n)
	want := fmt.Sprintf("bytes %d-%d/%d", off, off+n-1, o.size)
	err := o.s.get(o.ctx, o.name, in, func(out *s3.GetObjectOutput) error {
		// A server that ignores Range answers with the object from its start: those
		// bytes are not the ones asked for, and must not be read as if they were.
		if got := aws.ToString(out.ContentRange); got != want {
			return fmt.Errorf("the server answered %q to a request for %s (does it ignore Range?)", got, want)
		}
		got, err := io.ReadFull(out.Body, data)
		o.fetched.Add(int64(got))
		return err
	})
	if err != nil {
		return nil, err
	}
	return data, nil
}
