package archive

import (
	"archive/zip"
	"context"
	"io"
	"io/fs"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"backup/atomicfile"
	"backup/format"
	"backup/skiprules"
	"backup/walker"
)

// DefaultLevel is the compression level used when none is given; see BENCHMARKS.md for the
// measurement behind it.
const DefaultLevel = 6

// Memory the staged entries may hold: one entry at most spoolMemory, all of them together
// spoolBudget; past that they spill to unlinked temp files beside the archive.
const (
	spoolMemory = chunkSize
	spoolBudget = 16 << 20
)

// writeBuffer is the size of the writes to the archive file: one system call per 1 MiB
// rather than per few small entries.
const writeBuffer = 1 << 20

// queuePerJob is how many entries per worker may wait to be written: enough for the other
// workers to keep busy with small files while one compresses a big one.
const queuePerJob = 64

// handPerJob is how many entries per worker may wait for one: the walk runs a few files
// ahead instead of handing each over as a worker comes free (a reusing run of the bench
// corpus waited so at every file: 8% of its wall time). Each pins its folder's descriptor
// until a worker has read it, so they are few.
const handPerJob = 4

// Options configure a Writer. The zero value stores files uncompressed, one worker per CPU,
// and calls no hooks.
type Options struct {
	// Method is the compression method; "" means Deflate.
	Method format.Method
	// Level is the compression level, 1 (fastest) to 9 (smallest); 0 stores.
	Level int
	// Jobs is the number of files read and compressed at once, and of the workers that
	// compress the chunks of large files; 0 means one per CPU.
	Jobs int
	// Open opens the file to be stored as name; nil means src.Open. Tests use it to inject
	// faults.
	Open func(src walker.Handle, name string) (SourceFile, error)
	// Output wraps the temp file the archive's bytes are written to; nil writes to it
	// through an atomicfile.WriteBack. Tests use it to inject write failures such as a full
	// disk.
	Output func(f *os.File) io.Writer
	// The hooks are called on the Writer's own goroutine, one entry at a time, in the order
	// the entries were added.
	// OnFile is told of each file stored: its name, size, SHA-256, and the owner and link
	// group it was added with.
	OnFile func(f format.File)
	// Reference, when set, is an earlier archive whose entries of unchanged files are copied
	// rather than read and compressed again; OnFile is told of them with Reused set.
	Reference *Reference
	// Fresh, when set, is asked about each file the Reference would give: true makes the
	// Writer read the file anyway. Workers ask it, several at once.
	Fresh func(src walker.Handle, name string) bool
	// OnDir and OnSymlink are told of each directory and symlink stored.
	OnDir     func(d format.Dir)
	OnSymlink func(l format.Symlink)
	// OnCopy is told, before OnFile, of each file stored as a copy made from it (a database
	// snapshot: see Copied).
	OnCopy func(name string, src format.CopySource)
	// OnSkip is told of a file that was no longer a regular file when it was opened.
	OnSkip func(name string, kind skiprules.Kind)
	// Owners names the owner of a file found replaced since the walk listed it, whose
	// metadata is made again from the file opened; nil leaves the names out.
	Owners *Owners
	// IgnoreInode and IgnoreCtime are ReuseOptions' flags of these names, for file systems
	// that do not keep a file's inode (FUSE without use_ino) or change time stable: a file
	// is then not found replaced since the walk by its inode, nor changed while read by its
	// change time (IgnoreInode leaves out both, as for reuse).
	IgnoreInode, IgnoreCtime bool
	// Xattrs says that entries are stored with their extended attributes: a file's are read
	// again, from the file opened, when it is not the file, or not as, the walk saw it.
	Xattrs bool
	// OnWarn is told of each problem with a file, as an *fs.PathError naming the stored name:
	// op OpOpen, OpRead or OpStore; fs.ErrNotExist when it vanished; ErrChanged when it kept
	// changing.
	OnWarn func(err error)
}

// Writer writes one archive: to a temp file beside its final path (Create), or to a stream
// (CreateStream).
type Writer struct {
	opts   Options
	ctx    context.Context
	file   *os.File
	out    *hashedOut // between the zip writer and file: few large writes, hashed
	zw     *zipWriter
	queue  chan *item // walk order, bounded: back-pressure on the walk
	jobs   chan *item
	read   atomic.Int64
	newest time.Time

	pool    *chunkPool
	workers sync.WaitGroup
	written chan struct{}
	wait    sync.Once

	names nameOrder  // on the goroutine that adds entries
	links LinkGroups // hard-link groups by device and inode; on that goroutine too

	mu     sync.Mutex
	fatal  error
	halted chan struct{} // closed with the first fatal error

	// window and fallback copy small reused entries on the writing goroutine (see inline.go);
	// newSaver makes the fallback when first needed.
	window   refWindow
	fallback *saver
	newSaver func() *saver

	streamed  int                // entries written as they were read (see direct.go)
	published bool               // Commit handed the temp file to atomicfile.Publish
	staged    *atomicfile.Staged // what Commit published, for Left
	copyBuf   []byte             // for copying reference entries, on the writing goroutine
}

// item is one entry on its way into the archive.
type item struct {
	name   string
	src    walker.Handle // a file's, released once it is read
	info   fs.FileInfo
	meta   *format.Meta // owner and attributes; nil stores none (no ux field)
	target *string      // a symlink's target; nil for others
	link   int          // a file's hard-link group; 0 for none
	reuse  *refEntry    // the reference's entry of an unchanged file; nil for others
	// inline says the writing goroutine copies reuse itself, at its turn (see inline.go):
	// no worker has the item, and done is nil.
	inline bool
	done   chan struct{} // closed once out is set; nil for directories, symlinks and inline
	head   chan struct{} // closed when the item's turn comes; nil when it cannot be streamed
	out    outcome
}

// Create starts an archive in a new temp file in dir, named after base. The pipeline stops
// when ctx is done. It fails on a bad Method or Level, or when the temp file cannot be made.
func Create(ctx context.Context, dir, base string, opts Options) (*Writer, error) {
	comp, err := prepare(&opts)
	if err != nil {
		return nil, err
	}
	f, err := atomicfile.CreateTemp(dir, base)
	if err != nil {
		return nil, err
	}
	return start(ctx, f, output(f, opts.Output), dir, comp, opts), nil
}

// CreateStream starts an archive written to out as it is made, for an output that is not a
// file renamed into place (an upload, a pipe): the zip is written front to back without
// seeking, and what becomes of the bytes once CloseManifest returns is the caller's affair
// (Commit is not for such a Writer). Entries that wait their turn spill to spoolDir.
func CreateStream(ctx context.Context, out io.Writer, spoolDir string, opts Options) (*Writer, error) {
	comp, err := prepare(&opts)
	if err != nil {
		return nil, err
	}
	return start(ctx, nil, out, spoolDir, comp, opts), nil
}

// prepare fills in opts' defaults (a worker per CPU, as many as descriptors allow; files
// opened by openSource) and makes the compressor its workers share.
func prepare(opts *Options) (*compressor, error) {
	if opts.Jobs <= 0 {
		opts.Jobs = runtime.NumCPU()
	}
	opts.Jobs = fdJobs(opts.Jobs)
	if opts.Open == nil {
		opts.Open = openSource
	}
	// As many zstd encoders as CPUs would do: each is large, and more of them than there are
	// cores would only wait for a core.
	return newCompressor(opts.Method, opts.Level, opts.Jobs)
}

// start makes the Writer over out, which writes to file unless it is nil (a stream), and
// starts its pipeline.
func start(ctx context.Context, file *os.File, out io.Writer, spoolDir string, comp *compressor, opts Options) *Writer {
	w := &Writer{
		opts:    opts,
		ctx:     ctx,
		file:    file,
		queue:   make(chan *item, queuePerJob*opts.Jobs),
		jobs:    make(chan *item, handPerJob*opts.Jobs),
		pool:    newChunkPool(comp, opts.Jobs),
		written: make(chan struct{}),
		halted:  make(chan struct{}),
	}
	w.out = newHashedOut(out, file != nil)
	w.zw = newZipWriter(w.out, spoolDir, w.pool)
	spools := newSpoolConfig(spoolDir, spoolMemory, spoolBudget)
	w.newSaver = func() *saver {
		return &saver{comp: comp.newEncoder(), pool: w.pool, spools: spools, bytesRead: &w.read, open: opts.Open, fresh: opts.Fresh, owners: opts.Owners,
			ignoreInode: opts.IgnoreInode, ignoreCtime: opts.IgnoreCtime || opts.IgnoreInode, xattrs: opts.Xattrs}
	}
	for range opts.Jobs {
		w.workers.Add(1)
		go w.work(w.newSaver())
	}
	go w.run()
	return w
}

func output(f *os.File, wrap func(*os.File) io.Writer) io.Writer {
	if wrap == nil {
		return atomicfile.NewWriteBack(f)
	}
	return wrap(f)
}

// TempPath is the path of the temp file the archive is written to; "" for a stream.
func (w *Writer) TempPath() string {
	if w.file == nil {
		return ""
	}
	return w.file.Name()
}

// BytesRead is how many bytes of source files have been read so far; safe to poll from any
// goroutine.
func (w *Writer) BytesRead() int64 { return w.read.Load() }

// AddDir adds a directory entry, with its owner in a ux field unless meta is nil. It
// returns the pipeline's fatal error, if any, or why the name cannot come next (see AddFile).
func (w *Writer) AddDir(name string, info fs.FileInfo, meta *format.Meta) error {
	if err := checkLength(name + "/"); err != nil {
		return w.addLost(name, info, err)
	}
	return w.add(&item{name: name, info: info, meta: meta})
}

// AddFile queues the file src to be stored as name; a worker opens it through src later.
// The Writer releases src once the file is read, or at once when it cannot queue it. What
// became of the file is told through the hooks; the returned error is the pipeline's fatal
// error, if any. Entries come in walk order, each name once, from one goroutine: a name
// that is unsafe, the manifest's, or out of that order is refused with an error and not
// stored, so that no archive holds two entries of one name. A name longer than a zip entry
// holds is a warning (OpStore): that entry is lost, not the run. Unless meta is nil, the
// entry carries the owner in a ux field, and files of one device and inode are told to OnFile
// as one hard-link group.
func (w *Writer) AddFile(src walker.Handle, name string, info fs.FileInfo, meta *format.Meta) error {
	if err := checkLength(name); err != nil {
		src.Release()
		return w.addLost(name, info, err)
	}
	it := &item{name: name, src: src, info: info, meta: meta}
	if meta != nil {
		it.link = w.links.Of(info)
	}
	if e, ok := w.opts.Reference.lookup(name, info); ok {
		it.reuse = &e
		it.inline = w.copiesInline(&e)
	}
	if !it.inline {
		it.done = make(chan struct{})
		if w.file != nil { // an archive in a file can take back a streamed entry (see direct.go)
			it.head = make(chan struct{})
		}
	}
	if err := w.add(it); err != nil {
		src.Release()
		return err
	}
	if !it.inline {
		w.jobs <- it // workers drain jobs until Wait, whatever happens
	}
	return nil
}

func (w *Writer) add(it *item) error {
	if err := w.err(); err != nil {
		return err
	}
	if err := w.names.next(it.name); err != nil {
		return err
	}
	select {
	case w.queue <- it:
		return nil
	case <-w.ctx.Done():
		return w.ctx.Err()
	}
}

func (w *Writer) work(s *saver) {
	defer w.workers.Done()
	for it := range w.jobs {
		s.direct = w.directFor(it)
		it.out = s.saveOrReuse(w.ctx, it)
		it.src.Release()
		close(it.done)
	}
}

// run writes the entries in the order they were added.
func (w *Writer) run() {
	defer close(w.written)
	for it := range w.queue {
		if it.head != nil && w.err() == nil {
			close(it.head) // the archive is its worker's until done
		}
		if it.done != nil {
			<-it.done
		}
		if w.err() != nil {
			it.out.release()
			if it.inline {
				it.src.Release()
			}
		} else if err := w.write(it); err != nil {
			w.setErr(err)
		}
	}
}

func (w *Writer) write(it *item) error {
	if it.info.ModTime().After(w.newest) {
		w.newest = it.info.ModTime()
	}
	switch {
	case it.target != nil:
		return w.writeSymlink(it)
	case it.inline:
		return w.writeInline(it)
	case it.done == nil:
		return w.writeDir(it)
	}
	return w.writeFile(it)
}

// writeFile writes the file it as its outcome says: read, or reused.
func (w *Writer) writeFile(it *item) error {
	o := it.out
	defer o.release()
	if o.fatal != nil {
		return o.fatal
	}
	if o.skip != "" && w.opts.OnSkip != nil {
		w.opts.OnSkip(it.name, o.skip)
	}
	if o.reread != nil && w.opts.OnWarn != nil {
		w.opts.OnWarn(o.reread)
	}
	if o.reused != nil {
		var held []byte
		if o.held != nil {
			held = o.held.data
		}
		if err := w.writeReused(it, o.reused, held, o.direct); err != nil {
			return err
		}
	}
	if st := o.staged; st != nil {
		if err := w.writeStaged(it, st); err != nil {
			return err
		}
	}
	if o.warn != nil && w.opts.OnWarn != nil {
		w.opts.OnWarn(o.warn)
	}
	return nil
}

func (w *Writer) writeStaged(it *item, st *staged) error {
	name := it.name
	fh := fileHeader(name, st.info, st.method, st.crc, st.data.size, st.size, it.meta)
	if err := w.writeData(fh, st.data); err != nil {
		return err
	}
	if st.copyOf != nil && w.opts.OnCopy != nil {
		w.opts.OnCopy(name, *st.copyOf)
	}
	if w.opts.OnFile != nil {
		w.opts.OnFile(format.File{Path: name, Size: st.size, SHA256: format.Digest(st.sum), Link: it.link, Meta: it.meta})
	}
	return nil
}

// writeData writes the entry fh with the bytes sp holds, or finishes it if they went into the
// archive already.
func (w *Writer) writeData(fh *zip.FileHeader, sp *spool) error {
	if sp.streamed() {
		return sp.out.finish(fh)
	}
	zf, err := w.zw.CreateRaw(fh)
	if err != nil {
		return err
	}
	_, err = sp.copyTo(zf, w.buffer())
	return err
}

// directFor is how the worker reading it may stream it; nil when it may not.
func (w *Writer) directFor(it *item) *directTo {
	if it.head == nil {
		return nil
	}
	return &directTo{w: w, head: it.head, meta: it.meta}
}

// buffer is the writing goroutine's buffer for copying staged and reused entries.
func (w *Writer) buffer() []byte {
	if w.copyBuf == nil {
		w.copyBuf = make([]byte, writeBuffer)
	}
	return w.copyBuf
}

// Wait waits until every entry added so far is written, and returns the fatal error that
// stopped the pipeline, if any. No entry may be added after it.
func (w *Writer) Wait() error {
	w.wait.Do(func() {
		close(w.queue)
		close(w.jobs)
		w.workers.Wait()
		<-w.written // after the workers: the writer reads a file itself when a copy fails (inline.go)
		w.pool.close()
	})
	if err := w.err(); err != nil {
		return err
	}
	return w.ctx.Err()
}

func (w *Writer) err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.fatal
}

func (w *Writer) setErr(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fatal == nil {
		w.fatal = err
		close(w.halted)
	}
}
