package main

// A run into a backup set in a bucket: the archive is uploaded as it is written (a
// multipart upload that only shows at its name once complete, created with If-None-Match
// so no name is ever replaced), then its receipt, created once too. finishSet then reads it
// back with ranged requests before LATEST moves.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"backup/archive"
	"backup/atomicfile"
	"backup/backupset"
	"backup/backupset/s3store"
	"backup/format"
)

// remoteSet is the bucket's store when the run writes into a set in a bucket.
func (c *creation) remoteSet() *s3store.Store {
	if c.cfg.set == nil {
		return nil
	}
	st, _ := c.cfg.set.store.(*s3store.Store)
	return st
}

// remoteName is the archive's name in its set.
func (c *creation) remoteName() string {
	return strings.TrimPrefix(c.out.archive, c.cfg.set.store.Location()+"/")
}

// remoteOutput picks a default name that neither an archive nor a receipt in the set holds,
// with the picker of every other output (backupset.FreeName).
func (cfg *createConfig) remoteOutput(ctx context.Context, st *s3store.Store, now time.Time) (outputPaths, error) {
	name, err := backupset.FreeName(ctx, st, cfg.sources[0].name, now)
	if err != nil {
		return outputPaths{}, fmt.Errorf("output %s: %w", st.Location(), cause(err))
	}
	path := st.Location() + "/" + name
	return outputPaths{archive: path, receipt: path + format.ReceiptSuffix}, nil
}

// openUpload starts the archive's upload and the writer that streams into it. Entries that
// wait their turn spill to the system's temp folder, never more than the writer's budget.
func (c *creation) openUpload(ctx context.Context, st *s3store.Store, opts archive.Options) error {
	up, err := st.Create(ctx, c.remoteName())
	if err != nil {
		return fmt.Errorf("creating archive %s: %w", c.out.archive, cause(err))
	}
	w, err := archive.CreateStream(ctx, up, os.TempDir(), opts)
	if err != nil {
		up.Abort()
		return fmt.Errorf("creating archive %s: %w", c.out.archive, err)
	}
	c.w, c.upload = w, up
	return nil
}

// placeRemote creates the archive's receipt and then completes the upload (the archive
// appears at its name, never over another object). The receipt comes first, as in a folder
// set: a kill between the two leaves a receipt alone (a run prune removes once superseded),
// never an archive alone (kept for ever as unknown). When the upload then fails, the run's
// failed receipt replaces this one (see writeRemoteReceipt).
func (c *creation) placeRemote(ctx context.Context, rc *format.Receipt) error {
	up := c.upload
	c.upload = nil // completed or aborted below: nothing left to abort
	if err := c.putRemoteReceipt(ctx, rc); err != nil {
		up.Abort()
		return fmt.Errorf("writing receipt %s: %w", c.out.receipt, cause(err))
	}
	if _, err := up.Commit(); err != nil {
		if errors.Is(err, backupset.ErrExists) {
			// Another run's archive is at the name: the receipt beside it is not this run's
			// to write.
			c.dropRemoteReceipt(ctx)
			return fmt.Errorf("output %s exists: another run wrote it", c.out.archive)
		}
		return fmt.Errorf("uploading archive %s: %w", c.out.archive, cause(err))
	}
	c.written = true
	return nil
}

// putRemoteReceipt creates the receipt in the bucket. Interrupted, it tries once more within
// the cleanup's bound, so that the run knows its receipt's ETag (a receipt the server made,
// its answer lost, is recognised by its bytes) and can replace it with the failed one.
func (c *creation) putRemoteReceipt(ctx context.Context, rc *format.Receipt) error {
	data, err := rc.Marshal()
	if err != nil {
		return err
	}
	st := c.remoteSet()
	name := c.remoteName() + format.ReceiptSuffix
	c.receiptETag, err = st.Put(ctx, name, data, "")
	if err != nil && ctx.Err() != nil {
		dctx, cancel := st.Detached(ctx)
		defer cancel()
		c.receiptETag, err = st.Put(dctx, name, data, "")
	}
	return err
}

// dropRemoteReceipt deletes the receipt this run created, on its ETag.
func (c *creation) dropRemoteReceipt(ctx context.Context) {
	st := c.remoteSet()
	dctx, cancel := st.Detached(ctx)
	defer cancel()
	if st.Delete(dctx, c.remoteName()+format.ReceiptSuffix, c.receiptETag) == nil {
		c.receiptETag = ""
	}
}

// abortUpload drops an unfinished upload, so that no part of it stays stored (and billed).
func (c *creation) abortUpload() {
	if c.upload != nil {
		c.upload.Abort()
		c.upload = nil
	}
}

// writeRemoteReceipt writes a receipt into the bucket: created once for a failed run
// (unless an archive is at the name, whose receipt it must not replace), or replacing the
// receipt this run wrote, on its ETag, when the read-back found the archive damaged. An
// interrupted run writes it too, within the bound the store gives its cleanup.
func (c *creation) writeRemoteReceipt(ctx context.Context, rc *format.Receipt) error {
	st := c.remoteSet()
	ctx, cancel := st.Detached(ctx)
	defer cancel()
	if c.receiptETag == "" {
		_, err := st.Stat(ctx, c.remoteName())
		if err == nil {
			return nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err // whether an archive is there is not known: its receipt must stand
		}
	}
	data, err := rc.Marshal()
	if err != nil {
		return err
	}
	c.receiptETag, err = st.Put(ctx, c.remoteName()+format.ReceiptSuffix, data, c.receiptETag)
	return err
}

// readBackRemote reads the uploaded archive back as backup verify does, with ranged
// requests in parallel, against the size and SHA-256 the run wrote.
func (c *creation) readBackRemote(ctx context.Context, name string, sum format.Summary) error {
	ref := archiveRef{path: c.out.archive, store: c.cfg.set.store, entry: backupset.Entry{Name: name}}
	res, err := ref.verify(ctx, archive.VerifyOptions{Expect: &sum})
	return verdict(ctx, res, err)
}

// hookReceipt is the receipt the --exec-after hooks get as BACKUP_RECEIPT ("" when the run
// wrote none): the file the run wrote; for a set in a bucket, which a hook cannot open, a
// copy of it in a private folder under the temp folder, removed by done once the hooks end.
func (c *creation) hookReceipt(rc *format.Receipt, stderr io.Writer) (path string, done func()) {
	if rc == nil || !c.written {
		return "", func() {}
	}
	if c.remoteSet() == nil {
		return c.out.receipt, func() {}
	}
	dir, err := os.MkdirTemp("", "backup-hook-")
	if err == nil {
		path = filepath.Join(dir, c.remoteName()+format.ReceiptSuffix)
		var data []byte
		if data, err = rc.Marshal(); err == nil {
			err = atomicfile.WriteFile(path, data, 0o600)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "backup: could not copy receipt %s for the hooks: %v\n", c.out.receipt, cause(err))
		path = ""
	}
	return path, func() { os.RemoveAll(dir) }
}

// rewriteReceipt replaces the receipt the run wrote with rc (its hooks added): the file
// atomically, or the bucket's object on the ETag the run wrote, never a local path named
// s3://….
func (c *creation) rewriteReceipt(rc *format.Receipt) error {
	data, err := rc.Marshal()
	if err != nil {
		return err
	}
	st := c.remoteSet()
	if st == nil {
		return atomicfile.WriteFile(c.out.receipt, data, 0o600)
	}
	// The run's context may be cancelled (interrupted), and the hooks took their time: a
	// bounded request of its own.
	ctx, cancel := st.Detached(context.Background())
	defer cancel()
	c.receiptETag, err = st.Put(ctx, c.remoteName()+format.ReceiptSuffix, data, c.receiptETag)
	return err
}
