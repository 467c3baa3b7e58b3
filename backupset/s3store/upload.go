package s3store

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io/fs"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"backup/backupset"
	"backup/format"
)

// Parts are uploaded while the next one fills: memory stays at (partsInFlight+1) parts,
// whatever the archive's size, and nothing is staged on disk. S3 allows 10,000 parts, so
// the part size grows by basePart every 1,000 parts (up to about 859 GiB, 922 GB, in all).
const (
	basePart      = 16 << 20
	partsInFlight = 2
)

func partSize(n int) int { return basePart * (1 + n/1000) }

// Upload is an object being written as a multipart upload. Its name stays empty until
// Commit: S3 shows an object only when its upload completes, so a crash or an error leaves
// nothing at the name (only parts, which Abort or the next run's Clean removes).
type Upload struct {
	s    *Store
	ctx  context.Context
	name string
	id   string
	// token is in the object's metadata (backup-upload), so that a completion whose
	// answer was lost can be told from another writer's object at the name.
	token string

	buf   []byte
	next  int32 // the next part's number, from 1
	slots chan struct{}
	wg    sync.WaitGroup

	mu    sync.Mutex
	parts []types.CompletedPart
	err   error
}

// Create starts the upload of the object name. Write it, then Commit, or Abort.
func (s *Store) Create(ctx context.Context, name string) (*Upload, error) {
	token := rand.Text()
	out, err := s.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(s.bucket), Key: aws.String(s.key(name)),
		Metadata: map[string]string{tokenKey: token}})
	if err != nil {
		return nil, s.opError("create", name, "", err)
	}
	return &Upload{s: s, ctx: ctx, name: name, id: aws.ToString(out.UploadId), token: token, next: 1,
		buf: make([]byte, 0, partSize(0)), slots: make(chan struct{}, partsInFlight)}, nil
}

// Write adds p to the object; an upload that failed fails every later write.
func (u *Upload) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		if err := u.failed(); err != nil {
			return n, err
		}
		room := cap(u.buf) - len(u.buf)
		k := min(room, len(p))
		u.buf = append(u.buf, p[:k]...)
		p, n = p[k:], n+k
		if len(u.buf) == cap(u.buf) {
			u.send()
		}
	}
	return n, nil
}

func (u *Upload) failed() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.err
}

// send uploads the filled buffer as the next part, in the background.
func (u *Upload) send() {
	data, num := u.buf, u.next
	u.next++
	u.buf = make([]byte, 0, partSize(int(u.next)))
	u.slots <- struct{}{}
	u.wg.Go(func() {
		defer func() { <-u.slots }()
		out, err := u.s.client.UploadPart(u.ctx, &s3.UploadPartInput{Bucket: aws.String(u.s.bucket), Key: aws.String(u.s.key(u.name)),
			UploadId: aws.String(u.id), PartNumber: aws.Int32(num), Body: bytes.NewReader(data)})
		u.mu.Lock()
		defer u.mu.Unlock()
		if err != nil {
			u.err = cmpErr(u.err, u.s.opError("write", u.name, "", err))
			return
		}
		u.parts = append(u.parts, types.CompletedPart{PartNumber: aws.Int32(num), ETag: out.ETag})
	})
}

func cmpErr(first, next error) error {
	if first != nil {
		return first
	}
	return next
}

// Commit uploads the last part and completes the upload with If-None-Match: *, so that an
// object already at the name is never replaced (the error then matches
// backupset.ErrExists). On any error the upload is aborted. It returns the object's ETag.
func (u *Upload) Commit() (string, error) {
	if len(u.buf) > 0 || u.next == 1 {
		u.send() // only the last part may be small, and an object needs one part
	}
	u.wg.Wait()
	if err := u.failed(); err != nil {
		u.Abort()
		return "", err
	}
	parts := u.parts
	slices.SortFunc(parts, func(a, b types.CompletedPart) int { return int(*a.PartNumber - *b.PartNumber) })
	out, err := u.s.client.CompleteMultipartUpload(u.ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(u.s.bucket),
		Key: aws.String(u.s.key(u.name)), UploadId: aws.String(u.id), IfNoneMatch: aws.String("*"),
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
	if err != nil {
		err = u.s.opError("create", u.name, "", err)
		if etag, ok := u.completed(err); ok {
			return etag, nil
		}
		u.Abort()
		return "", err
	}
	return aws.ToString(out.ETag), nil
}

// tokenKey is the metadata that marks an object with the upload that made it.
const tokenKey = "backup-upload"

// completed says whether a completion that failed with err was in fact this upload's own:
// the object at the name carries this upload's token. A retry after a lost answer is
// refused (the name taken, the upload gone), an interrupt may cancel it while the server
// makes it, and the retries may all fail in transit after the first was made: whatever the
// error, the object is asked for, within the cleanup's bound.
func (u *Upload) completed(err error) (string, bool) {
	ctx, cancel := u.s.Detached(u.ctx)
	defer cancel()
	out, herr := u.s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(u.s.bucket), Key: aws.String(u.s.key(u.name))})
	if herr != nil || out.Metadata[tokenKey] != u.token {
		return "", false
	}
	return aws.ToString(out.ETag), true
}

// Abort waits for the parts in flight and aborts the upload, so that no part stays stored
// (and billed). It does not use the upload's context, which may be the cancelled one, but
// a bounded one (see Detached): a server that stalls leaves the upload to the next run's
// Clean rather than hold this one.
func (u *Upload) Abort() error {
	u.wg.Wait()
	ctx, cancel := u.s.Detached(u.ctx)
	defer cancel()
	_, err := u.s.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String(u.s.bucket),
		Key: aws.String(u.s.key(u.name)), UploadId: aws.String(u.id)})
	return u.s.opError("abort upload of", u.name, "", err)
}

// Clean aborts the unfinished uploads of the set's archives and receipts: a run killed
// mid-upload (kill -9, a lost machine) could not abort its own. The caller holds the lock,
// so none of them is still being written. The listing, like List's, stops at the next "/":
// the uploads of a set nested below this one are not this set's to list.
func (s *Store) Clean(ctx context.Context) ([]string, error) {
	p := s3.NewListMultipartUploadsPaginator(s.client, &s3.ListMultipartUploadsInput{Bucket: aws.String(s.bucket), Prefix: aws.String(s.prefix),
		Delimiter: aws.String("/")})
	var aborted []string
	var seen pageTokens
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return aborted, s.opError("list uploads", "", "", err)
		}
		marker := aws.ToString(page.NextKeyMarker) + "\x00" + aws.ToString(page.NextUploadIdMarker)
		if err := seen.next(aws.ToBool(page.IsTruncated), marker); err != nil {
			return aborted, s.opError("list uploads", "", "", err)
		}
		for _, up := range page.Uploads {
			name, ok := s.nameOf(aws.ToString(up.Key))
			if !ok || !backupset.IsArchiveName(strings.TrimSuffix(name, format.ReceiptSuffix)) {
				continue // not an archive of this set: another set's, perhaps one being written
			}
			_, err := s.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String(s.bucket), Key: up.Key, UploadId: up.UploadId})
			if err != nil && !errors.Is(s.opError("abort", name, "", err), fs.ErrNotExist) {
				return aborted, s.opError("abort upload of", name, "", err)
			}
			aborted = append(aborted, name)
		}
	}
	return aborted, nil
}
