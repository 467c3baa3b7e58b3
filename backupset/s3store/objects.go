package s3store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"unicode"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials/processcreds"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"backup/backupset"
)

// opError names the object and what was done to it, and turns the server's answers that
// callers branch on into the errors they test for: a missing object matches fs.ErrNotExist,
// a failed condition backupset.ErrExists (create) or backupset.ErrChanged (replace, delete).
func (s *Store) opError(op, name, ifMatch string, err error) error {
	if err == nil {
		return nil
	}
	var re *smithyhttp.ResponseError
	status := 0
	if errors.As(err, &re) {
		status = re.HTTPStatusCode()
	}
	var api smithy.APIError
	code := ""
	if errors.As(err, &api) {
		code = api.ErrorCode()
	}
	conflict := status == http.StatusConflict && code == "ConditionalRequestConflict"
	switch {
	case code == "NoSuchBucket":
		err = fmt.Errorf("no bucket %s on the server", s.bucket)
	case status == http.StatusNotFound && (code == "" || code == "NotFound") && strings.HasPrefix(op, "list"):
		// S3 lists an empty prefix as empty and names a missing bucket: a listing answered
		// 404 with no code of its own (the SDK names a bare 404 NotFound) came from
		// something that is not an S3 server.
		err = errors.New("the server answered 404 Not Found to a listing, as no S3 server does: is the endpoint an S3 server?")
	case code == "NoSuchKey" || code == "NotFound" || code == "NoSuchUpload" || status == http.StatusNotFound && code == "":
		// Only a 404 that says an object or an upload is missing is one: a server names
		// other things it did not find with a 404 too (versitygw an unknown access key,
		// XAdminUserNotFound), which "file does not exist" would hide.
		err = fs.ErrNotExist
	case (status == http.StatusPreconditionFailed || conflict) && ifMatch == "" && op != "read":
		// A create whose condition failed, or that raced another conditional write of the
		// key (409, which AWS says may be retried): the key is someone else's, or is being
		// made theirs, as a lock taken by another host.
		err = backupset.ErrExists
	case status == http.StatusPreconditionFailed || conflict:
		err = backupset.ErrChanged
	case code != "" && status == http.StatusForbidden:
		err = deniedError{fmt.Errorf("%s (HTTP %d): %s", serverText(code), status, serverText(api.ErrorMessage()))}
	case code != "":
		err = fmt.Errorf("%s (HTTP %d): %s", serverText(code), status, serverText(api.ErrorMessage()))
	default:
		err = outsideText{causeOf(err)}
	}
	return &fs.PathError{Op: op, Path: s.loc + "/" + name, Err: err}
}

// deniedError is the server's refusal of what these credentials may not do (403,
// AccessDenied), said in its words: it matches fs.ErrPermission, as a folder's EACCES does,
// so that `sets` calls a set whose LATEST it may not read unreadable, not damaged, and a dry
// run reads a set it may not lock.
type deniedError struct{ error }

func (deniedError) Is(target error) bool { return target == fs.ErrPermission }

// causeOf strips the SDK's layers ("operation error S3: PutObject, exceeded maximum number
// of attempts, 5, https response error StatusCode: 0…") down to the transport's error, for
// a one-line message that still says the request was retried.
func causeOf(err error) error {
	attempts := ""
	var max *retry.MaxAttemptsError
	if errors.As(err, &max) {
		attempts = fmt.Sprintf(" (after %d attempts)", max.Attempt)
	}
	var stall *StallError
	switch {
	case errors.As(err, &stall):
		return fmt.Errorf("%w%s", stall, attempts)
	case errors.Is(err, context.DeadlineExceeded):
		// A cleanup request's bound (see Detached): the SDK's own words are a row of
		// empty fields.
		return fmt.Errorf("no answer in time: %w", context.DeadlineExceeded)
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("interrupted: %w", context.Canceled)
	}
	var ne *net.OpError
	if errors.As(err, &ne) {
		return fmt.Errorf("%w%s", ne, attempts)
	}
	var pe *processcreds.ProviderError
	if errors.As(err, &pe) {
		return fmt.Errorf("%w%s", credentialProcessError(pe), attempts)
	}
	var oe *smithy.OperationError
	if errors.As(err, &oe) {
		err = oe.Err
	}
	return fmt.Errorf("%w%s", err, attempts)
}

// credentialProcessError is the failure of a profile's credential_process without what the
// process printed, which the SDK quotes when it cannot parse it ("parse failed of process
// output: {…}"): that output holds the keys. Only the SDK's own words and the process's
// exit are kept; any other cause is the parse's.
func credentialProcessError(pe *processcreds.ProviderError) error {
	inner := errors.Unwrap(pe.Err)
	var exit *exec.ExitError
	var start *exec.Error
	var notRun *fs.PathError
	if inner == nil || errors.As(inner, &exit) || errors.As(inner, &start) || errors.As(inner, &notRun) {
		return pe
	}
	return fmt.Errorf("the AWS credential_process printed no credentials backup can read (its output is not shown: it holds keys): %w", inner)
}

// List lists the objects directly under the prefix (not those in deeper "folders").
func (s *Store) List(ctx context.Context) ([]backupset.Object, error) {
	// The delimiter keeps deeper keys out, unless the server ignores it: nameOf does too.
	return s.list(ctx, aws.String("/"), s.nameOf)
}

// list lists the objects under the prefix, page by page (each continuation token checked
// for a server that repeats one), each named by name, and left out when name says no.
func (s *Store) list(ctx context.Context, delimiter *string, name func(key string) (string, bool)) ([]backupset.Object, error) {
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{
		Bucket: aws.String(s.bucket), Prefix: aws.String(s.prefix), Delimiter: delimiter,
	})
	var objs []backupset.Object
	var seen pageTokens
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, s.opError("list", "", "", err)
		}
		if err := seen.next(aws.ToBool(page.IsTruncated), aws.ToString(page.NextContinuationToken)); err != nil {
			return nil, s.opError("list", "", "", err)
		}
		for _, o := range page.Contents {
			if n, ok := name(aws.ToString(o.Key)); ok {
				objs = append(objs, backupset.Object{Name: n, Size: aws.ToInt64(o.Size), ETag: aws.ToString(o.ETag)})
			}
		}
	}
	return objs, nil
}

// Stat describes one object.
func (s *Store) Stat(ctx context.Context, name string) (backupset.Object, error) {
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.key(name))})
	if err != nil {
		return backupset.Object{}, s.opError("stat", name, "", err)
	}
	return backupset.Object{Name: name, Size: aws.ToInt64(out.ContentLength), ETag: aws.ToString(out.ETag)}, nil
}

// ReadFile reads a small object whole.
func (s *Store) ReadFile(ctx context.Context, name string, limit int64) ([]byte, string, error) {
	var data []byte
	var etag string
	in := &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.key(name))}
	err := s.get(ctx, name, in, func(out *s3.GetObjectOutput) error {
		if aws.ToInt64(out.ContentLength) > limit {
			return errTooLarge(limit)
		}
		var err error
		data, err = io.ReadAll(io.LimitReader(out.Body, limit+1))
		if err == nil && int64(len(data)) > limit {
			err = errTooLarge(limit)
		}
		etag = aws.ToString(out.ETag)
		return err
	})
	return data, etag, err
}

func errTooLarge(limit int64) error { return fmt.Errorf("larger than %d bytes", limit) }

// Put writes a small object: created once (If-None-Match: *) when ifMatch is "", else
// replaced only while it has that ETag (If-Match). A condition that failed on a retry may
// have failed on the first try's own write, whose answer was lost (a reset, a stall); and
// retries that all failed in transit may follow a first try the server made: when the
// object holds exactly data, the write is taken as done. The look is bounded as a
// cleanup's request is (see Detached), since ctx may be the cause of the error.
func (s *Store) Put(ctx context.Context, name string, data []byte, ifMatch string) (string, error) {
	etag, err := s.put(ctx, name, data, ifMatch)
	if err != nil {
		rctx, cancel := s.Detached(ctx)
		defer cancel()
		if now, nowTag, rerr := s.ReadFile(rctx, name, int64(len(data))); rerr == nil && bytes.Equal(now, data) {
			return nowTag, nil
		}
	}
	return etag, err
}

func (s *Store) put(ctx context.Context, name string, data []byte, ifMatch string) (string, error) {
	in := &s3.PutObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.key(name)), Body: bytes.NewReader(data)}
	op := "create"
	if ifMatch == "" {
		in.IfNoneMatch = aws.String("*")
	} else {
		in.IfMatch, op = aws.String(ifMatch), "replace"
	}
	out, err := s.client.PutObject(ctx, in)
	if err != nil {
		if ifMatch != "" && errors.Is(s.opError(op, name, ifMatch, err), fs.ErrNotExist) {
			// S3 answers 404 to If-Match on a missing key: it was removed meanwhile.
			return "", &fs.PathError{Op: op, Path: s.loc + "/" + name, Err: backupset.ErrChanged}
		}
		return "", s.opError(op, name, ifMatch, err)
	}
	return aws.ToString(out.ETag), nil
}

// Delete removes an object only while it has the ETag ifMatch; a missing one is no error.
func (s *Store) Delete(ctx context.Context, name, ifMatch string) error {
	in := &s3.DeleteObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.key(name))}
	if ifMatch != "" {
		in.IfMatch = aws.String(ifMatch)
	}
	_, err := s.client.DeleteObject(ctx, in)
	err = s.opError("delete", name, ifMatch, err)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		// The server may have made a delete whose answer never came (a reset, an
		// interrupt), and its retry then failed or was refused: an object that is gone is
		// deleted. The look is bounded as a cleanup's request is, since ctx may be done.
		sctx, cancel := s.Detached(ctx)
		defer cancel()
		if _, serr := s.Stat(sctx, name); errors.Is(serr, fs.ErrNotExist) {
			return nil
		}
	}
	return err
}

// serverText makes text a server sent fit the one line an error gets: cut to 200
// characters, and quoted (Go's rules) when it holds a newline, a control or a format
// character, so that it can neither forge a line of backup's own nor reorder the terminal's.
func serverText(s string) string {
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return strconv.QuoteToGraphic(s)
		}
	}
	return s
}

// outsideText is an error whose text may hold what a server sent (the SDK quotes bodies it
// could not parse): printed through serverText, unwrapped as itself.
type outsideText struct{ err error }

func (e outsideText) Error() string { return serverText(e.err.Error()) }
func (e outsideText) Unwrap() error { return e.err }

// pageTokens are the continuation tokens a listing was given, so that a server whose paging
// repeats itself (answers "more follows" under a token it gave before) fails the listing
// instead of holding it for ever: each page comes at once, so no deadline would fire.
type pageTokens map[string]bool

func (seen *pageTokens) next(truncated bool, token string) error {
	if !truncated {
		return nil
	}
	if *seen == nil {
		*seen = pageTokens{}
	}
	if token == "" || (*seen)[token] {
		return errors.New("the server's listing does not end (it repeats a page)")
	}
	(*seen)[token] = true
	return nil
}
