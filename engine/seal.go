package engine

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"backup/archive"
	"backup/atomicfile"
	"backup/eintr"
	"backup/format"
	"backup/seal"
)

// sealer encrypts a run's archive (Options.Recipients): the zip streams, front to back,
// into an age writer whose ciphertext goes to a temp file beside Output.Path (put in place
// by Result.Commit, as a plain archive's is) or to Output.Stream. The ciphertext's size and
// SHA-256, what the receipt records, are counted on the way.
type sealer struct {
	enc       io.WriteCloser // age's
	buf       *bufio.Writer  // few large writes to the file or stream
	sum       *cipherSum
	file      *os.File           // a file Output's temp file; nil for a stream
	published bool               // Commit handed the temp file to atomicfile.Publish
	staged    *atomicfile.Staged // what commit published, for Result.Left
}

// cipherSum counts and hashes the ciphertext as it is written.
type cipherSum struct {
	w io.Writer
	h hash.Hash
	n int64
}

func (c *cipherSum) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.h.Write(p[:n])
	c.n += int64(n)
	return n, err
}

// openSealed starts the archive's Writer into an age writer over the Output.
func (e *Engine) openSealed(ctx context.Context, dir string, opts archive.Options) error {
	out := e.opts.Output
	s := &sealer{}
	dst := out.Stream
	if dst == nil {
		// Beside its final path, to be renamed there; dir, where plaintext is staged, is
		// $TMPDIR for an encrypted archive (see stagingDir), perhaps another file system.
		f, err := atomicfile.CreateTemp(filepath.Dir(out.Path), filepath.Base(out.Path))
		if err != nil {
			return fmt.Errorf("creating archive %s: %w", out.Path, cause(err))
		}
		s.file, dst = f, atomicfile.NewWriteBack(f)
		e.leaveOut(f.Name(), out.Path)
	} else {
		e.leaveOutStream(dst)
	}
	s.buf = bufio.NewWriterSize(dst, 1<<20)
	s.sum = &cipherSum{w: s.buf, h: sha256.New()}
	enc, err := e.opts.Recipients.Encrypt(s.sum)
	if err == nil {
		e.sealer = s
		s.enc = enc
		var w *archive.Writer
		if w, err = archive.CreateStream(ctx, enc, dir, opts); err == nil {
			e.setWriter(w)
			return nil
		}
	}
	s.abort()
	return fmt.Errorf("creating archive %s: %w", out.Path, err)
}

// close writes the age file's last chunk, flushes and syncs, and returns the ciphertext's
// size and SHA-256.
func (s *sealer) close() (format.Summary, error) {
	if err := s.enc.Close(); err != nil {
		return format.Summary{}, err
	}
	if err := s.buf.Flush(); err != nil {
		return format.Summary{}, err
	}
	if s.file != nil {
		if err := s.file.Sync(); err != nil {
			return format.Summary{}, err
		}
	}
	return format.Summary{Size: s.sum.n, SHA256: hex.EncodeToString(s.sum.h.Sum(nil))}, nil
}

// commit puts the temp file at final with the staged files, as archive.Writer.Commit does.
func (s *sealer) commit(final string, replace bool, with []*atomicfile.Staged, last bool) error {
	if err := s.file.Close(); err != nil {
		for _, st := range with {
			st.Discard()
		}
		return err
	}
	// From here the temp name belongs to Publish (see archive.Writer.commit).
	s.published = true
	arch := &atomicfile.Staged{Temp: s.file.Name(), Final: final, NoReplace: !replace}
	s.staged = arch
	if last {
		return atomicfile.Publish(append(with, arch)...)
	}
	return atomicfile.Publish(append([]*atomicfile.Staged{arch}, with...)...)
}

// abort removes the temp file unless Publish has it.
func (s *sealer) abort() {
	if s == nil || s.file == nil {
		return
	}
	s.file.Close()
	if !s.published {
		eintr.Remove(s.file.Name())
	}
}

// checkCiphertext checks what a read-back without a key can: the archive file at path has
// the size and SHA-256 the run wrote, and its age header parses.
func checkCiphertext(ctx context.Context, path string, want format.Summary) error {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file", path)
	}
	if err != nil {
		return err
	}
	_, err = seal.CheckCiphertext(ctx, f, info.Size(), &want)
	return err
}
