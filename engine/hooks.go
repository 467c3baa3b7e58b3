package engine

import (
	"backup/format"
	"backup/skiprules"
)

// Hooks are how a run reports what became of each path; report.Recorder implements the
// first seven. A nil hook is not called.
//
// The walk calls Skip, Exclude and Warn on Run's goroutine, and in a dry run File, Dir,
// Symlink and Copy too. In a run that writes, the archive's writer calls File, Dir, Symlink,
// Copy, Skip and Warn on a goroutine of its own, one entry at a time in walk order. So two
// hooks may run at once: a receiver must be safe for concurrent use.
type Hooks struct {
	// File is told of each file stored (in a dry run, that would be), with its size, SHA-256
	// and metadata; Reused set when its entry was copied from the reference.
	File func(f format.File)
	// Dir and Symlink are told of each directory and symlink stored.
	Dir     func(d format.Dir)
	Symlink func(l format.Symlink)
	// Copy is told, before File, of a file stored as a copy made from it (a database's
	// snapshot), or in a dry run that would be.
	Copy func(name string, src format.CopySource)
	// Skip is told of a path that is not stored for what it is (a socket, a FIFO…).
	Skip func(name string, kind skiprules.Kind)
	// Exclude is told of a path left out by a rule (skiprules' Rule* names, or RuleSidecar).
	Exclude func(name, rule string)
	// Warn is told of each problem with one path, an *fs.PathError naming its stored name
	// and the op (format.Op*) that failed; fs.ErrNotExist when it vanished,
	// archive.ErrChanged when it kept changing. The run goes on.
	Warn func(err error)

	// Expect is told, on Run's goroutine before the walk, how many files the run expects to
	// store, when it knows (the reference's): a receiver can make its list that long at once.
	Expect func(files int)
	// NoReuse is told, on Run's goroutine before the walk, why Options.Reference is not used:
	// the run reads every file.
	NoReuse func(err error)
	// Walking is called on Run's goroutine as the walk into the archive starts (never in a
	// dry run), and the function it returns once the walk has ended and every entry is
	// written, whatever the outcome: the span in which Progress moves.
	Walking func() (done func())
	// Manifest returns the manifest the archive ends with, built from what the hooks above
	// were told (report.Recorder.Manifest). It is called once, on Run's goroutine, after every
	// other hook; a run that writes an archive needs it.
	Manifest func() *format.Manifest
}

// fill gives every nil hook but Manifest a no-op, so that the run calls them without asking.
func (h *Hooks) fill() {
	if h.File == nil {
		h.File = func(format.File) {}
	}
	if h.Dir == nil {
		h.Dir = func(format.Dir) {}
	}
	if h.Symlink == nil {
		h.Symlink = func(format.Symlink) {}
	}
	if h.Copy == nil {
		h.Copy = func(string, format.CopySource) {}
	}
	if h.Skip == nil {
		h.Skip = func(string, skiprules.Kind) {}
	}
	if h.Exclude == nil {
		h.Exclude = func(string, string) {}
	}
	if h.Warn == nil {
		h.Warn = func(error) {}
	}
	if h.Expect == nil {
		h.Expect = func(int) {}
	}
	if h.NoReuse == nil {
		h.NoReuse = func(error) {}
	}
	if h.Walking == nil {
		h.Walking = func() func() { return func() {} }
	}
}
