package main

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"backup/format"
)

// A restore's --json or --json-lines output may go into a file inside DEST
// (backup restore --json a.zip . > report.json). That is refused only when the archive
// holds a file at that name: restore --force would replace it, and the report would go into
// the replaced file, which no name reaches. Which names the archive holds is known once its
// plan is made, so until then what is written to a stdout that is a regular file is held
// (heldStdout), and dropped with the refusal. The name is computed again from the folder
// DEST's lock holds (the one the plan reads and Run writes into): DEST's path may have been
// turned to another folder since the command line was read.

// stdoutInDest is the name, relative to DEST, of the regular file inside DEST that stdout
// goes into, "" when it goes elsewhere (or what is "" too: nothing is written there).
func stdoutInDest(stdout io.Writer, what, dest string) string {
	if what == "" {
		return ""
	}
	out, ok := stdoutFile(stdout, what)
	if !ok || out.Path == "" {
		return ""
	}
	root, err := filepath.EvalSymlinks(dest)
	if err == nil {
		root, err = filepath.Abs(root)
	}
	if err != nil {
		return "" // no DEST yet: nothing is in it
	}
	rel, err := filepath.Rel(root, out.Path)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
		return ""
	}
	return filepath.ToSlash(rel)
}

// heldStdout keeps what is written to it until release, which writes it through (and all
// that follows), or drop, after which nothing is written.
type heldStdout struct {
	w       io.Writer
	buf     bytes.Buffer
	through bool
	dropped bool
	err     error // writing what was held failed: every later write says it (output cut)
}

func (h *heldStdout) Write(p []byte) (int, error) {
	switch {
	case h.dropped:
		return len(p), nil
	case h.through && h.err != nil:
		return 0, h.err
	case h.through:
		return h.w.Write(p)
	}
	return h.buf.Write(p)
}

// release writes what was held, and from now on all that is written. A failed write is
// not the restore's: the next write returns it, and the command says it as output cut.
func (h *heldStdout) release() {
	if h.through || h.dropped {
		return
	}
	h.through = true
	_, h.err = h.w.Write(h.buf.Bytes())
	h.buf = bytes.Buffer{}
}

func (h *heldStdout) drop() { h.dropped, h.buf = true, bytes.Buffer{} }

// stdoutWritten refuses a plan that writes the file stdout goes into: the error, which
// restore says as a usage error, and nothing is written to stdout.
func (cfg restoreConfig) stdoutWritten(writes func(name string) bool) error {
	if cfg.held == nil {
		return nil
	}
	if cfg.stdoutName != "" && writes(cfg.stdoutName) {
		cfg.held.drop()
		return fmt.Errorf("%s goes into %s, inside DEST %s, a file this restore writes: redirect it outside DEST", cfg.stdoutWhat(), format.QuoteName(cfg.stdoutName), format.QuoteName(cfg.dest))
	}
	cfg.held.release()
	return nil
}
