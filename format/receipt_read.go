package format

import (
	"encoding/json"
	"fmt"
	"io/fs"

	"backup/atomicfile"
)

// MaxReceiptSize bounds what is read of a receipt: a receipt lists every skipped and warned
// path, but a file larger than this is not one this tool wrote.
const MaxReceiptSize = 1 << 30

// ReadReceipt reads and parses the receipt at path, the one way every command reads one:
// never through a symlink, never blocking on a FIFO or device put in its place, at most
// MaxReceiptSize bytes, and only of this tool's schemas (v1, and v2 for an encrypted archive). Errors are *fs.PathError values
// naming path; a missing file matches fs.ErrNotExist.
func ReadReceipt(path string) (*Receipt, error) {
	data, err := atomicfile.ReadRegular(path, MaxReceiptSize)
	if err != nil {
		return nil, err
	}
	return ParseReceipt(path, data)
}

// ParseReceipt parses a receipt read from elsewhere (an object in a bucket), with
// ReadReceipt's checks; path names it in errors.
func ParseReceipt(path string, data []byte) (*Receipt, error) {
	// The errors name the receipt quoted: they are printed inside other errors that hold
	// quoted names, and must be printable whole (see sayf).
	path = QuoteName(path)
	var rc Receipt
	if err := json.Unmarshal(data, &rc); err != nil {
		return nil, &fs.PathError{Op: "read receipt", Path: path, Err: fmt.Errorf("not a receipt: %w", err)}
	}
	switch {
	case rc.Schema != ReceiptSchema && rc.Schema != SealedReceiptSchema:
		return nil, &fs.PathError{Op: "read receipt", Path: path, Err: fmt.Errorf("schema %q, want %q or %q", rc.Schema, ReceiptSchema, SealedReceiptSchema)}
	case rc.Schema == SealedReceiptSchema && rc.Encryption == nil:
		// v2 is the receipt of an encrypted archive: one that says nothing of its
		// encryption is not one this tool wrote.
		return nil, &fs.PathError{Op: "read receipt", Path: path, Err: fmt.Errorf("schema %q without encryption", rc.Schema)}
	case rc.Status != Complete && rc.Status != Incomplete && rc.Status != Failed:
		// The status decides what is trusted (LATEST, a reference): a word backup never
		// writes is not one it can act on, and is set text, not printed as it is.
		return nil, &fs.PathError{Op: "read receipt", Path: path, Err: fmt.Errorf("status %q is not complete, incomplete or failed", rc.Status)}
	}
	return &rc, nil
}
