package s3store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Every request has a deadline, so that a server that stops answering (a SIGSTOPped
// process, a dropped route, a full TCP window) cannot hold a run: a connection on which no
// byte moves either way for the idle timeout fails the request, which the SDK then retries
// with backoff. A deadline on progress rather than on the whole request lets a 176 MiB part
// crawl over a slow uplink; 60 s is what boto3 waits for a read.
const defaultIdleTimeout = 60 * time.Second

// cleanupTimeout bounds the requests made after a run was interrupted or failed (aborting
// its upload, writing its failed receipt, releasing its lock): an interrupted run must end
// soon even when the server is the reason it was interrupted.
const cleanupTimeout = 10 * time.Second

// StallError is a request's error when the server moved no byte for the idle timeout.
type StallError struct{ After time.Duration }

func (e *StallError) Error() string {
	return fmt.Sprintf("the server sent or took nothing for %v", e.After)
}

// Timeout and Temporary make the SDK retry it, as it does a reset connection.
func (e *StallError) Timeout() bool   { return true }
func (e *StallError) Temporary() bool { return true }

// httpClient is the SDK's client with every connection under the idle deadline. Idle
// connections are dropped from the pool before their deadline could fire on them.
func httpClient(idle time.Duration) *awshttp.BuildableClient {
	return awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
		dial := tr.DialContext
		if dial == nil {
			dial = (&net.Dialer{Timeout: 30 * time.Second}).DialContext
		}
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &idleConn{Conn: c, idle: idle}, nil
		}
		tr.IdleConnTimeout = idle / 2
		tr.ResponseHeaderTimeout = 0 // the idle deadline covers the wait for an answer
	})
}

// idleConn pushes its deadline (both ways) idle past every read and write, so that a
// request fails once nothing has moved for that long. The transport keeps a read pending
// on the connection while it writes the request: pushing on writes too keeps a long upload
// from failing while bytes still go out.
type idleConn struct {
	net.Conn
	idle  time.Duration
	timed atomic.Bool // the deadline fired once: the connection is dead of a stall
}

func (c *idleConn) Read(p []byte) (int, error) {
	c.Conn.SetDeadline(time.Now().Add(c.idle))
	n, err := c.Conn.Read(p)
	return n, c.stalled(err)
}

func (c *idleConn) Write(p []byte) (int, error) {
	c.Conn.SetDeadline(time.Now().Add(c.idle))
	n, err := c.Conn.Write(p)
	return n, c.stalled(err)
}

// stalled names a stall as such. Once the deadline fired on one side, the transport closes
// the connection, and the other side (a body still being written) fails with "use of closed
// network connection": that too is the stall, which the request must report.
func (c *idleConn) stalled(err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		c.timed.Store(true)
	}
	if err != nil && c.timed.Load() {
		return &StallError{After: c.idle}
	}
	return err
}

// cleanupWindow is the time the requests after an interrupt share: once the run's context
// is cancelled, every cleanup request of the store ends by one deadline, set by the first,
// so that a stalled server costs an interrupted run cleanupTimeout in all, not per request.
type cleanupWindow struct {
	mu       sync.Mutex
	deadline time.Time
}

// Detached returns a context for a request that must still be made when ctx is done (abort
// an upload, write a failed receipt, release the lock): not cancelled with ctx, but bounded.
// While ctx is live each such request gets cleanupTimeout of its own; once ctx is done
// (interrupted), all of them share one cleanupTimeout.
func (s *Store) Detached(ctx context.Context) (context.Context, context.CancelFunc) {
	limit := min(cleanupTimeout, s.idle)
	if ctx.Err() == nil {
		return context.WithTimeout(context.WithoutCancel(ctx), limit)
	}
	s.cleanup.mu.Lock()
	if s.cleanup.deadline.IsZero() {
		s.cleanup.deadline = time.Now().Add(limit)
	}
	deadline := s.cleanup.deadline
	s.cleanup.mu.Unlock()
	return context.WithDeadline(context.WithoutCancel(ctx), deadline)
}

// get makes a GET and reads its answer's body with read. The SDK retries a request until
// its answer's headers arrive, not while its body is read: a body that stalls or breaks
// midway is fetched again here, with backoff, as often as the SDK would try a request. A
// failed request is returned as opError renders it, a failed read as a PathError.
func (s *Store) get(ctx context.Context, name string, in *s3.GetObjectInput, read func(*s3.GetObjectOutput) error) error {
	for attempt := 1; ; attempt++ {
		out, err := s.client.GetObject(ctx, in)
		if err != nil {
			return s.opError("read", name, aws.ToString(in.IfMatch), err)
		}
		err = read(out)
		out.Body.Close()
		if err == nil {
			return nil
		}
		if attempt >= s.attempts || !brokenBody(err) || sleep(ctx, backoff(attempt)) != nil {
			if attempt > 1 {
				err = fmt.Errorf("%w (after %d attempts)", err, attempt)
			}
			return &fs.PathError{Op: "read", Path: s.loc + "/" + name, Err: err}
		}
	}
}

// brokenBody says whether a body's read failed in transit (a stall, a reset, a connection
// closed before the length it announced), so that reading it again may work.
func brokenBody(err error) bool {
	var stall *StallError
	var slow *SlowError
	return errors.As(err, &stall) || errors.As(err, &slow) || errors.Is(err, io.ErrUnexpectedEOF) ||
		retry.RetryableConnectionError{}.IsErrorRetryable(err) == aws.TrueTernary
}

// backoff is the wait before the next try: 0.2 s, doubling, at most 5 s, jittered so that
// the parallel readers of verify do not come back together.
func backoff(attempt int) time.Duration {
	d := min(200*time.Millisecond<<(attempt-1), 5*time.Second)
	return d/2 + rand.N(d/2)
}

// sleep waits d, or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
