package archive

import (
	"backup/format"
)

// OpError is an error an Options.Open hook returns for a source that fails in a way of its
// own (a database that could not be copied consistently): the warning names Op, and since
// the file is not in the archive, counts as lost.
type OpError struct {
	Op  string
	Err error
}

func (e *OpError) Error() string { return e.Op + ": " + e.Err.Error() }

func (e *OpError) Unwrap() error { return e.Err }

// Copied is implemented by a SourceFile whose bytes are not the file's own but a consistent
// copy made from it (a database snapshot). The entry holds the copy, under the file's name,
// mode and mtime; the manifest says so, with the file's own size and mtime.
type Copied interface {
	CopyOf() format.CopySource
}
