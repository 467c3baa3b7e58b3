package main

// A run into a backup set in a bucket: the archive is uploaded as it is written (a
// multipart upload that only shows at its name once complete, created with If-None-Match
// so no name is ever replaced), then its receipt, created once too. finishSet then reads it
// back with ranged requests before LATEST moves.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"backup/archive"
	"backup/atomicfile"
	"backup/backupset"
	"backup/backupset/s3store"
	"backup/eintr"
	"backup/engine"
	"backup/format"
	"backup/seal"
)

// remoteOutput picks a default name that neither an archive nor a receipt in the set holds,
// with the picker of every other output (backupset.FreeName).
func (cfg *createConfig) remoteOutput(ctx context.Context, st *s3store.Store, now time.Time) (outputPaths, error) {
	name, err := backupset.FreeName(ctx, st, cfg.series(), now)
	if err != nil {
		return outputPaths{}, fmt.Errorf("output %s: %w", st.Location(), cause(err))
	}
	path := st.Location() + "/" + name
	return outputPaths{archive: path, receipt: path + format.ReceiptSuffix}, nil
}

// uploadTarget uploads the archive into a set in a bucket as the engine writes it.
type uploadTarget struct {
	out outputPaths
	st  *s3store.Store
	// upload is the archive's unfinished upload; nil once completed or aborted.
	upload *s3store.Upload
	// receiptETag is the receipt's in the bucket, once written.
	receiptETag string
	// cache, when set, keeps a local copy of the archive (see create_cache.go): copy is
	// the one being written, until kept or dropped.
	cache *setCache
	copy  *cacheWriter
}

func (t *uploadTarget) paths() outputPaths { return t.out }

// name is the archive's name in its set.
func (t *uploadTarget) name() string {
	return strings.TrimPrefix(t.out.archive, t.st.Location()+"/")
}

// open starts the archive's upload, the stream the engine writes into.
func (t *uploadTarget) open(ctx context.Context) (engine.Output, error) {
	up, err := t.st.Create(ctx, t.name())
	if err != nil {
		return engine.Output{}, fmt.Errorf("creating archive %s: %w", t.out.archive, cause(err))
	}
	t.upload = up
	if t.cache == nil {
		return engine.Output{Path: t.out.archive, Stream: up}, nil
	}
	t.copy = t.cache.create(t.name())
	return engine.Output{Path: t.out.archive, Stream: teeStream{up, t.copy}}, nil
}

// place creates the archive's receipt and then completes the upload (the archive appears at
// its name, never over another object). The receipt comes first, as in a folder set: a
// kill between the two leaves a receipt alone (a run prune removes once superseded), never
// an archive alone (kept for ever as unknown). When the upload then fails, the run's failed
// receipt replaces this one (see writeFailed).
func (t *uploadTarget) place(ctx context.Context, _ *engine.Result, rc *format.Receipt) error {
	up := t.upload
	t.upload = nil // completed or aborted below: nothing left to abort
	if err := t.putReceipt(ctx, rc); err != nil {
		up.Abort()
		return fmt.Errorf("writing receipt %s: %w", t.out.receipt, cause(err))
	}
	if _, err := up.Commit(); err != nil {
		if errors.Is(err, backupset.ErrExists) {
			// Another run's archive is at the name: the receipt beside it is not this run's
			// to write.
			t.dropReceipt(ctx)
			return fmt.Errorf("output %s exists: another run wrote it", t.out.archive)
		}
		return fmt.Errorf("uploading archive %s: %w", t.out.archive, cause(err))
	}
	return nil
}

// putReceipt creates the receipt in the bucket. Interrupted, it tries once more within the
// cleanup's bound, so that the run knows its receipt's ETag (a receipt the server made, its
// answer lost, is recognised by its bytes) and can replace it with the failed one.
func (t *uploadTarget) putReceipt(ctx context.Context, rc *format.Receipt) error {
	data, err := rc.Stored().Marshal()
	if err != nil {
		return err
	}
	name := t.name() + format.ReceiptSuffix
	t.receiptETag, err = t.st.Put(ctx, name, data, "")
	if err != nil && ctx.Err() != nil {
		dctx, cancel := t.st.Detached(ctx)
		defer cancel()
		t.receiptETag, err = t.st.Put(dctx, name, data, "")
	}
	return err
}

// dropReceipt deletes the receipt this run created, on its ETag.
func (t *uploadTarget) dropReceipt(ctx context.Context) {
	dctx, cancel := t.st.Detached(ctx)
	defer cancel()
	if t.st.Delete(dctx, t.name()+format.ReceiptSuffix, t.receiptETag) == nil {
		t.receiptETag = ""
	}
}

// abort drops an unfinished upload, so that no part of it stays stored (and billed).
func (t *uploadTarget) abort() {
	if t.upload != nil {
		t.upload.Abort()
		t.upload = nil
	}
}

func (t *uploadTarget) writeFailed(ctx context.Context, rc *format.Receipt) (bool, error) {
	return t.writeReceipt(ctx, rc)
}

func (t *uploadTarget) replace(ctx context.Context, rc *format.Receipt) error {
	_, err := t.writeReceipt(ctx, rc)
	return err
}

// writeReceipt writes a receipt into the bucket: created once for a failed run (unless an
// archive is at the name, whose receipt it must not replace), or replacing the receipt this
// run wrote, on its ETag, when the read-back found the archive damaged. An interrupted run
// writes it too, within the bound the store gives its cleanup. wrote says whether it wrote
// one.
func (t *uploadTarget) writeReceipt(ctx context.Context, rc *format.Receipt) (wrote bool, err error) {
	ctx, cancel := t.st.Detached(ctx)
	defer cancel()
	if t.receiptETag == "" {
		_, err := t.st.Stat(ctx, t.name())
		if err == nil {
			return false, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return false, err // whether an archive is there is not known: its receipt must stand
		}
	}
	data, err := rc.Stored().Marshal()
	if err != nil {
		return false, err
	}
	t.receiptETag, err = t.st.Put(ctx, t.name()+format.ReceiptSuffix, data, t.receiptETag)
	return true, err
}

// rewrite replaces the receipt the run wrote on the ETag it wrote, in a bounded request of
// its own: the run's context may be cancelled (interrupted), and the hooks took their time.
func (t *uploadTarget) rewrite(rc *format.Receipt) error {
	data, err := rc.Stored().Marshal()
	if err != nil {
		return err
	}
	ctx, cancel := t.st.Detached(context.Background())
	defer cancel()
	t.receiptETag, err = t.st.Put(ctx, t.name()+format.ReceiptSuffix, data, t.receiptETag)
	return err
}

// hookReceipt copies rc, which a hook cannot open in the bucket, into a private folder
// under the temp folder, removed by done once the hooks end.
func (t *uploadTarget) hookReceipt(rc *format.Receipt) (string, func(), error) {
	dir, err := eintr.MkdirTemp("", "backup-hook-")
	if err != nil {
		return "", func() {}, err
	}
	done := func() { os.RemoveAll(dir) }
	path := filepath.Join(dir, t.name()+format.ReceiptSuffix)
	data, err := rc.Stored().Marshal()
	if err == nil {
		err = atomicfile.WriteFile(path, data, 0o600)
	}
	if err != nil {
		return "", done, err
	}
	return path, done, nil
}

// readBack reads the uploaded archive back as backup verify does, with ranged requests in
// parallel, against the size and SHA-256 the run wrote. An encrypted archive is decrypted
// with ids when the run's result says they open it; otherwise only its ciphertext is
// checked (size, SHA-256, age header), as its receipt says (encryption.read_back).
func (t *uploadTarget) readBack(ctx context.Context, sum format.Summary, res *engine.Result, ids *seal.Identities) error {
	ref := archiveRef{path: t.out.archive, store: t.st, entry: backupset.Entry{Name: t.name()}, ids: ids}
	if res.ReadBackChecks() == format.ReadBackCiphertext {
		f, err := ref.file(ctx)
		if err == nil {
			defer f.Close()
			_, err = seal.CheckCiphertext(ctx, f, f.Size(), &sum)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return cause(err)
	}
	vr, err := ref.verify(ctx, archive.VerifyOptions{Expect: &sum})
	return verdict(ctx, vr, err)
}
