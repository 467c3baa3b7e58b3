package s3store

import (
	"context"
	"strings"

	"backup/backupset"
)

// ListTree lists every object under the prefix, at any depth, named by its key below the
// prefix ("hosts/h001/LATEST"): the one paginated listing that backup sets makes of a whole
// fleet, 1,000 keys a page. It is the only request of this package that lists below the
// next "/", and it only reads.
func (s *Store) ListTree(ctx context.Context) ([]backupset.Object, error) {
	return s.list(ctx, nil, func(key string) (string, bool) {
		name, ok := strings.CutPrefix(key, s.prefix)
		return name, ok && name != ""
	})
}

// Sub returns the store of the set in the folder dir below this store's prefix ("hosts/h001";
// "" for this one), on the same client. ok is false when dir cannot be a set's prefix: an
// empty, . or .. segment, or a control character, which ParseLocation refuses too, so that
// every set Sub gives can be named by a location a user types.
func (s *Store) Sub(dir string) (*Store, bool) {
	if dir == "" {
		return s, true
	}
	_, prefix, err := ParseLocation(Scheme + s.bucket + "/" + s.prefix + dir)
	if err != nil || strings.HasSuffix(dir, "/") {
		return nil, false
	}
	return &Store{client: s.client, bucket: s.bucket, prefix: prefix, loc: strings.TrimSuffix(Scheme+s.bucket+"/"+prefix, "/"),
		lockTTL: s.lockTTL, now: s.now, idle: s.idle, attempts: s.attempts}, true
}
