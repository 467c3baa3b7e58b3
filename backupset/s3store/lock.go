package s3store

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"backup/backupset"
)

// defaultLockTTL is how long a lock object stands unrenewed before another run may take it
// over: long enough for a few failed renewals and some clock skew between hosts, short
// enough that a crashed run does not block the next day's cron run (restic's stale locks
// block for 30 minutes).
const defaultLockTTL = 5 * time.Minute

// pollInterval is how often a waiting run looks at a held lock again.
const pollInterval = 500 * time.Millisecond

// lease is the content of the lock object: who holds it, and until when.
type lease struct {
	backupset.Owner
	Started time.Time `json:"started"`
	Expires time.Time `json:"expires"`
}

// Lock takes the set's lock object, PREFIX/.backup.lock: created with If-None-Match: *, so
// of two runs only one creates it; renewed with If-Match on its ETag while the run lasts;
// released by a delete on that ETag. A lock past its expiry (its holder died), or whose
// holder ran on this host and is certainly dead (see backupset.Owner.Gone), is taken over by
// a replace on the ETag that was read, so of two runs taking it over only one wins. A lock
// held by a live run is a *backupset.LockedError, at once or after wait.
func (s *Store) Lock(ctx context.Context, wait time.Duration) (backupset.Held, error) {
	deadline := time.Now().Add(wait)
	for {
		h, err := s.tryLock(ctx, 3)
		var locked *backupset.LockedError
		if !errors.As(err, &locked) || !time.Now().Before(deadline) {
			return h, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(min(pollInterval, time.Until(deadline))):
		}
	}
}

// tryLock creates the lock object, or takes over an expired one. A lock released between
// the create and the read is tried again, up to tries times in all.
func (s *Store) tryLock(ctx context.Context, tries int) (backupset.Held, error) {
	data, l := s.newLease()
	etag, err := s.Put(ctx, backupset.LockName, data, "")
	if err == nil {
		return s.hold(ctx, etag, l), nil
	}
	if !errors.Is(err, backupset.ErrExists) {
		return nil, err
	}
	old, oldTag, age, err := s.readLease(ctx)
	if errors.Is(err, os.ErrNotExist) && tries > 1 {
		return s.tryLock(ctx, tries-1) // released just now
	}
	if errors.Is(err, os.ErrNotExist) {
		return nil, &backupset.LockedError{Dir: s.loc}
	}
	if err != nil {
		return nil, err
	}
	var held lease
	decoded := json.Unmarshal(old, &held) == nil
	// JSON that names no expiry (null, {}) is no lease: from a server without Date it
	// would have expired in year 1, and be taken over at once.
	parsed := decoded && !held.Expires.IsZero()
	var expired bool
	if age >= 0 {
		// By the server's clock, how long since the lock object was written: its writer's
		// clock, which wrote the expiry, may run ahead (a dead host's lock would block the
		// set for as long) or behind (a live host's would be taken at once).
		expired = age >= s.lockTTL
	} else {
		// A server that gives no Date: the lease's own expiry, when there is a lease. One
		// that does not read as a lease may be a live run's read back wrong, and stands
		// (an operator deletes it).
		expired = parsed && !s.now().Before(held.Expires)
	}
	if !expired && !(parsed && held.Gone()) {
		// Anyone who may write to the bucket wrote the host name: it is printed as
		// outside text.
		return nil, &backupset.LockedError{Dir: s.loc, Pid: held.Pid, Host: serverText(held.Host)}
	}
	// Expired (a damaged lock object too, once unrenewed for as long), or its holder dead:
	// take it over, on the condition that it is still the one read.
	etag, err = s.Put(ctx, backupset.LockName, data, oldTag)
	if errors.Is(err, backupset.ErrChanged) {
		return nil, &backupset.LockedError{Dir: s.loc}
	}
	if err != nil {
		return nil, err
	}
	h := s.hold(ctx, etag, l)
	h.took = &backupset.Takeover{Expired: decoded && expired}
	if decoded {
		h.took.Owner = held.Owner
		h.took.Owner.Host = serverText(held.Host)
	}
	return h, nil
}

func (s *Store) newLease() ([]byte, lease) {
	now := s.now()
	l := lease{Owner: backupset.ThisProcess(), Started: now.UTC(), Expires: now.Add(s.lockTTL).UTC()}
	data, _ := json.Marshal(l) // a struct of strings, ints and times always encodes
	return data, l
}

// heldLock renews the lease until released.
type heldLock struct {
	s     *Store
	lease lease
	// ctx is the run's: Release is bounded by Detached(ctx). stop cancels a renewal in
	// flight, so that a stalled server cannot hold Release.
	ctx  context.Context
	stop context.CancelFunc
	quit chan struct{} // closed by Release: no renewal after the one in flight
	done chan struct{}

	// took is the holder this lock was taken over from; nil for a free lock.
	took *backupset.Takeover

	mu   sync.Mutex
	etag string
	lost error // why the lease was lost, if it was
	// renewed is when the lease was last written, by the wall clock (Round(0) drops the
	// monotonic reading, which stands still while the machine is suspended).
	renewed time.Time
}

// TookOver says whose lock this one took over; nil when it was free.
func (h *heldLock) TookOver() *backupset.Takeover { return h.took }

func (s *Store) hold(ctx context.Context, etag string, l lease) *heldLock {
	h := &heldLock{s: s, lease: l, etag: etag, ctx: ctx, quit: make(chan struct{}), done: make(chan struct{}), renewed: s.now().Round(0)}
	renewCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	h.stop = stop
	go h.renew(renewCtx)
	return h
}

// renew moves the expiry forward every third of the TTL, on the condition that the lock
// object is still this run's. A renewal refused because it changed means another run took
// the lock over (this one stalled past its expiry): the loss is kept for Release to report.
func (h *heldLock) renew(ctx context.Context) {
	defer close(h.done)
	t := time.NewTicker(h.s.lockTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.quit:
			return
		case <-t.C:
		}
		h.mu.Lock()
		h.renewLocked(ctx)
		h.mu.Unlock()
	}
}

// renewLocked writes the lease with a new expiry, on the condition that the lock object is
// still this run's; h.mu is held.
func (h *heldLock) renewLocked(ctx context.Context) {
	now := h.s.now()
	h.lease.Expires = now.Add(h.s.lockTTL).UTC()
	data, _ := json.Marshal(h.lease)
	etag, err := h.s.Put(ctx, backupset.LockName, data, h.etag)
	if err == nil {
		h.etag, h.renewed = etag, now.Round(0)
	} else if errors.Is(err, backupset.ErrChanged) {
		h.lost = err
	}
}

// errTakenOver is the error of a run whose lock another run took over while it held it.
var errTakenOver = errors.New("the set's lock was taken over by another run while this one held it")

// Confirm says whether the lock is still this run's, before a step only its holder may take
// (moving LATEST). A run that stalled past its lease (a machine suspended, a process stopped,
// a server that took no renewal) may have lost the lock to another run, which then writes
// the set too: when a renewal is due, it is made now, and a lock taken over is an error. A
// lease renewed within the last third of its TTL costs no request.
func (h *heldLock) Confirm(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lost == nil && h.s.now().Round(0).Sub(h.renewed) >= h.s.lockTTL/3 {
		h.renewLocked(ctx)
	}
	if h.lost != nil {
		return errTakenOver
	}
	return nil
}

// Release stops the renewals and deletes the lock object if it is still this run's, within
// the bound Detached gives: a lock the server did not let go expires on its own.
//
// A renewal in flight is let finish within that bound rather than cancelled: cancelled, the
// server may still have made it, and the delete on the ETag from before would then miss the
// lock object, left to block every run until it expires.
func (h *heldLock) Release() error {
	ctx, cancel := h.s.Detached(h.ctx)
	defer cancel()
	close(h.quit)
	select {
	case <-h.done:
	case <-ctx.Done():
		h.stop()
		<-h.done
	}
	h.stop()
	if h.lost != nil {
		return errTakenOver
	}
	return h.s.Delete(ctx, backupset.LockName, h.etag)
}

// readLease reads the lock object, its ETag and its age by the server's clock: the time
// between its Last-Modified and the answer's Date, -1 when the server gives either not.
// An object larger than a lease can be reads as nil.
func (s *Store) readLease(ctx context.Context) (data []byte, etag string, age time.Duration, err error) {
	const limit = 4096
	age = -1
	in := &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.key(backupset.LockName))}
	err = s.get(ctx, backupset.LockName, in, func(out *s3.GetObjectOutput) error {
		var rerr error
		data, rerr = io.ReadAll(io.LimitReader(out.Body, limit+1))
		if len(data) > limit {
			// No lease is that large: junk at the name, judged as a lease that does not
			// read (it stands its TTL, then is taken over), not an error that would fail
			// every run for as long as it stays.
			data = nil
		}
		etag = aws.ToString(out.ETag)
		if raw, ok := awsmiddleware.GetRawResponse(out.ResultMetadata).(*smithyhttp.Response); ok && out.LastModified != nil {
			if date, derr := http.ParseTime(raw.Header.Get("Date")); derr == nil {
				age = max(0, date.Sub(*out.LastModified))
			}
		}
		return rerr
	})
	return data, etag, age, err
}
