package s3store

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// minRate is the slowest a request may move its bytes, on average over its whole length:
// far below any link a backup runs over (a 16 MiB part at 1 KiB/s takes 4.6 hours), far above
// a server that trickles a byte just often enough to keep the idle deadline away.
const minRate = 1 << 10 // bytes a second

// unknownAnswer is the size a request is allowed for an answer that announces none (a
// listing sent in chunks).
const unknownAnswer = 1 << 20

// SlowError is a request's error when the server, though never idle for the idle timeout,
// did not get through it within its bound (see boundedClient).
type SlowError struct{ After time.Duration }

func (e *SlowError) Error() string {
	return fmt.Sprintf("the server did not get through the request in %v (slower than %d bytes a second)", e.After.Round(time.Second), minRate)
}

// Timeout and Temporary make the SDK retry it, as it does a stall.
func (e *SlowError) Timeout() bool   { return true }
func (e *SlowError) Temporary() bool { return true }

// boundedClient bounds each request as a whole, beside the idle deadline on its connection:
// a server that sends (or takes) a byte a minute keeps a connection live for ever, and the
// run with it, a create's lock renewed all along. A request gets twice the idle timeout (so
// that a server that stops is still named a stall), and a second for each KiB it sends and
// each KiB of its answer that has come, up to what the answer may hold (the range asked
// for, else what it announces): time is earned by bytes that came, not by those announced,
// since a receipt may be announced at 1 GiB and then trickled. Past that it fails with
// SlowError, and is retried. A CompleteMultipartUpload is left to the idle deadline: S3
// keeps its connection live with whitespace while it assembles a large object, which may
// take minutes.
type boundedClient struct {
	client aws.HTTPClient
	idle   time.Duration
}

func (b boundedClient) Do(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPost && r.URL.Query().Has("uploadId") {
		return b.client.Do(r)
	}
	start, sent := time.Now(), max(r.ContentLength, 0)
	ctx, cancel := context.WithCancel(r.Context())
	var slow atomic.Bool
	timer := time.AfterFunc(b.bound(sent), func() {
		slow.Store(true)
		cancel()
	})
	resp, err := b.client.Do(r.WithContext(ctx))
	if err != nil {
		timer.Stop()
		cancel()
		if slow.Load() {
			return nil, &SlowError{After: time.Since(start)}
		}
		return nil, err
	}
	resp.Body = &boundedBody{body: resp.Body, start: start, moved: sent, most: sent + answerSize(r, resp),
		earn: func(moved int64) { timer.Reset(b.bound(moved) - time.Since(start)) },
		slow: &slow, stop: func() { timer.Stop(); cancel() }}
	return resp, nil
}

// bound is how long a request may take once moved bytes have gone either way.
func (b boundedClient) bound(moved int64) time.Duration { return 2*b.idle + perRate(moved) }

// perRate is how long n bytes may take at minRate.
func perRate(n int64) time.Duration { return time.Duration(n/minRate+1) * time.Second }

// answerSize is the size of resp's body the bound allows for: the range r asked for, else
// the length resp announces, else unknownAnswer.
func answerSize(r *http.Request, resp *http.Response) int64 {
	if from, to, ok := parseRange(r.Header.Get("Range")); ok {
		return to - from + 1
	}
	if resp.ContentLength >= 0 {
		return resp.ContentLength
	}
	return unknownAnswer
}

// parseRange parses "bytes=FROM-TO", the only form of Range this package sends.
func parseRange(s string) (from, to int64, ok bool) {
	a, b, found := strings.Cut(strings.TrimPrefix(s, "bytes="), "-")
	if !found || !strings.HasPrefix(s, "bytes=") {
		return 0, 0, false
	}
	from, err1 := strconv.ParseInt(a, 10, 64)
	to, err2 := strconv.ParseInt(b, 10, 64)
	return from, to, err1 == nil && err2 == nil && to >= from
}

// boundedBody is an answer's body under its request's bound: the bytes read earn time, up
// to most in all with those sent; a read cut by the bound is a SlowError, and Close ends
// the bound.
type boundedBody struct {
	body        io.ReadCloser
	start       time.Time
	moved, most int64
	earn        func(moved int64)
	slow        *atomic.Bool
	stop        func()
}

func (b *boundedBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	if n > 0 && b.moved < b.most {
		b.moved = min(b.moved+int64(n), b.most)
		b.earn(b.moved)
	}
	if err != nil && err != io.EOF && b.slow.Load() {
		err = &SlowError{After: time.Since(b.start)}
	}
	return n, err
}

func (b *boundedBody) Close() error {
	b.stop()
	return b.body.Close()
}
