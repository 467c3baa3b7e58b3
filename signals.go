package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"backup/atomicfile"
	"backup/hooks"
)

// hangupIgnored says SIGHUP was ignored when the process started (nohup): Notify would
// undo that, so it is read before any.
var hangupIgnored = signal.Ignored(syscall.SIGHUP)

// stopSignals are the signals that stop a command cleanly: SIGINT, SIGTERM, and SIGHUP (a
// closed terminal, a dropped ssh session), whose default action would kill the run where it
// stands, leaving its temp files (a database's staged copy, plaintext for an encrypted
// run), unless whoever started it asked for SIGHUP to be ignored.
func stopSignals() []os.Signal {
	if hangupIgnored {
		return []os.Signal{os.Interrupt, syscall.SIGTERM}
	}
	return []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}
}

// interruptible returns the context every command runs under. The first of stopSignals
// cancels it, so the command stops cleanly: temp files removed, a failed receipt written,
// exit 130. A second one ends the process at once with exit 130, so that nothing a command
// waits on can keep it from being stopped; what it leaves are temp names, never a final path.
// stop undoes the signal handling.
func interruptible() (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, stopSignals()...)
	if endEarly() {
		cancel()
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-done:
			return
		}
		select {
		case <-sigs:
			forcedExit()
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel()
	}
}

// earlyCatcher holds a stop signal (stopSignals) that comes while a command parses its flags and
// opens its set, before interruptible: Go's default action would kill the run there, with
// no --json answer and exit 143 instead of 130. The first such signal is kept for the first
// interruptible, which starts cancelled; a second ends the process at once (exit 130), as
// interruptible's does.
type earlyCatcher struct {
	sigs chan os.Signal
	got  atomic.Bool
	done chan struct{}
}

// early is the catcher run() started (catchEarly) until a command's interruptible, or the
// end of run(), takes it.
var early atomic.Pointer[earlyCatcher]

// catchEarly starts catching SIGINT and SIGTERM until the command's interruptible takes
// over.
func catchEarly() {
	e := &earlyCatcher{sigs: make(chan os.Signal, 2), done: make(chan struct{})}
	signal.Notify(e.sigs, stopSignals()...)
	go func() {
		defer close(e.done)
		for range e.sigs {
			if e.got.Swap(true) {
				forcedExit()
			}
		}
	}()
	early.Store(e)
}

// endEarly stops the early catching and says whether a signal came meanwhile. interruptible
// calls it with its own handler in place: no signal falls between the two.
func endEarly() bool {
	e := early.Swap(nil)
	if e == nil {
		return false
	}
	signal.Stop(e.sigs) // no more deliveries once Stop returns
	close(e.sigs)
	<-e.done
	return e.got.Load()
}

// pipeSignals receives SIGPIPE and is never read: it only has to exist.
var pipeSignals = make(chan os.Signal, 1)

// survivePipes makes a write to a closed pipe on stdout or stderr fail with EPIPE instead of
// killing the process, which is what Go does by default for those two. A run whose reader
// went away (2>&1 | head -1) must still finish, or clean up, and say how it ended: a create
// its receipt, a restore its DEST whole and its journal removed, a prune its --exec-after
// hooks. run() calls it for every command.
// Notify rather than Ignore: an ignored signal stays ignored in the hooks a run starts, and
// they should die of a closed pipe as programs expect.
func survivePipes() {
	signal.Notify(pipeSignals, syscall.SIGPIPE)
}

// stopOnError is the stderr of every command (run() wraps it): once a write to it fails (a closed pipe, a full disk),
// it drops every later write, so that nothing the run prints can stop it or cost a failed
// system call per file. Its writes always succeed.
type stopOnError struct {
	w      io.Writer
	failed atomic.Bool
}

func newStopOnError(w io.Writer) *stopOnError {
	if s, ok := w.(*stopOnError); ok {
		return s // run() wraps every command's stderr; create's own wrap must not nest
	}
	return &stopOnError{w: w}
}

func (s *stopOnError) Write(p []byte) (int, error) {
	if !s.failed.Load() {
		if _, err := s.w.Write(p); err != nil {
			s.failed.Store(true)
		}
	}
	return len(p), nil
}

// Fd is the file's descriptor, for the terminal checks of the progress bar; ^uintptr(0)
// when w is not a file.
func (s *stopOnError) Fd() uintptr {
	if f, ok := s.w.(*os.File); ok {
		return f.Fd()
	}
	return ^uintptr(0)
}

// ForChild is what a hook's output goes to: the file itself while it works (so the hook
// writes to it directly), nothing (the null device) once it failed.
func (s *stopOnError) ForChild() io.Writer {
	if s.failed.Load() {
		return nil
	}
	return s.w
}

// forcedExit ends the process at once on a second signal, killing first the hooks running
// (their process groups would outlive it) and removing the temp files
// that must not outlive it (atomicfile.RemoveExitTemps); other temp names stay, for the next
// run to clean.
func forcedExit() {
	hooks.KillRunning()
	atomicfile.RemoveExitTemps()
	if say := lastWords.Load(); say != nil {
		(*say)()
	}
	os.Exit(exitInterrupted)
}

// lastWords, when set, is what a forced exit still says before it ends the process: what
// the run leaves cannot be put right without it (restore --force's before-state, the only
// way back for a DEST left half changed).
var lastWords atomic.Pointer[func()]

// sayAtForcedExit makes say the last words of a forced exit, until the returned func is
// called.
func sayAtForcedExit(say func()) (done func()) {
	lastWords.Store(&say)
	return func() { lastWords.CompareAndSwap(&say, nil) }
}
