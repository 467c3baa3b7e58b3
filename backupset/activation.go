package backupset

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"syscall"
	"time"
)

// ActivationName is the file beside LATEST that records a LATEST chosen by hand. LATEST
// itself stays one line holding an archive name (its format is a contract), so the record
// lives apart and is trusted only while it names the archive LATEST names: a create run that
// moves LATEST forward leaves a stale record that no reader believes, and need not remove it.
const ActivationName = "LATEST.activated"

// maxActivation bounds how much of the record is read.
const maxActivation = 4096

// Activation records who chose LATEST's target by hand, and when.
type Activation struct {
	Archive string    `json:"archive"`
	At      time.Time `json:"activated_at"`
	// By names the command: "activate", or "adopt" for adopt --activate.
	By string `json:"by"`
}

// ActivateByHand is Activate for an operator's choice: once LATEST names the archive, the
// choice is recorded (see ActivationName), so that status can say why LATEST is not the
// newest backup. LATEST moves first: a crash before the record is written leaves a LATEST
// that is right and a record that is stale, never a record that claims a move not made.
// It returns the archive's entry. A record that cannot be written is a *RecordError: LATEST
// has moved, and the activation stands.
func (l *Lock) ActivateByHand(ctx context.Context, a Activation, allowIncomplete bool, verify Verifier) (Entry, error) {
	e, err := l.CheckActivation(ctx, a.Archive, allowIncomplete, verify)
	if err != nil {
		return e, err
	}
	if err := l.point(ctx, a.Archive); err != nil {
		return e, err
	}
	if err := l.record(ctx, a); err != nil {
		return e, &RecordError{Path: location(l.store, ActivationName), Err: err}
	}
	return e, nil
}

// RecordError is ActivateByHand's error when LATEST moved but the record of the choice could
// not be written: what a crash between the two leaves. Status then says LATEST was not
// activated by hand.
type RecordError struct {
	Path string // the record's
	Err  error
}

func (e *RecordError) Error() string {
	cause := e.Err
	var errno syscall.Errno
	if errors.As(cause, &errno) {
		cause = errno // the temp file's name and the rename add nothing here
	}
	return "LATEST moved, but " + e.Path + " could not be written (status will not say it was activated by hand): " + cause.Error()
}

// Unwrap returns the cause.
func (e *RecordError) Unwrap() error { return e.Err }

// record writes the activation record, replacing the one read.
func (l *Lock) record(ctx context.Context, a Activation) error {
	data, err := json.Marshal(a)
	if err != nil {
		return err
	}
	etag := ""
	if o, err := l.store.Stat(ctx, ActivationName); err == nil {
		etag = o.ETag
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	_, err = l.store.Put(ctx, ActivationName, append(data, '\n'), etag)
	return err
}

// CurrentActivation returns the record of the hand-made choice LATEST holds now, or nil when
// a create run set it (or no valid record names it).
func (l *Lock) CurrentActivation(ctx context.Context) *Activation {
	name, _, err := readPointer(ctx, l.store)
	if err != nil {
		return nil
	}
	return readActivation(ctx, l.store, name)
}

// readActivation returns the record when it names target; nil otherwise. A record that
// cannot be read is no record: it only explains, it never decides.
func readActivation(ctx context.Context, st Store, target string) *Activation {
	data, _, err := st.ReadFile(ctx, ActivationName, maxActivation)
	if err != nil {
		return nil
	}
	var a Activation
	if json.Unmarshal(data, &a) != nil || a.Archive != target {
		return nil
	}
	return &a
}
