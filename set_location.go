package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"backup/backupset"
	"backup/backupset/s3store"
	"backup/format"
)

// s3Flags say how to reach the server of an s3:// set, beyond the AWS configuration.
type s3Flags struct {
	endpoint  string
	pathStyle bool
	// idleTimeout is a test hook (hidden): the tests that stop the server shorten the
	// deadline on progress that every request has (60 s).
	idleTimeout time.Duration
	// spool is set by the commands that read an archive whole (restore, verify): a block
	// they read twice is fetched once, kept on disk in between (s3store.Options.SpoolDir).
	spool bool
}

// addS3Flags adds the flags of the commands that take a set location.
func addS3Flags(flags *pflag.FlagSet) *s3Flags {
	f := &s3Flags{}
	flags.StringVar(&f.endpoint, "s3-endpoint", "", "the S3 server's `URL`, for an s3:// set (default: $AWS_ENDPOINT_URL_S3, else AWS)")
	flags.BoolVar(&f.pathStyle, "s3-path-style", false, "name the bucket in the URL's path, not its host (most self-hosted servers)")
	flags.DurationVar(&f.idleTimeout, "s3-idle-timeout", 0, "fail (and retry) an S3 request once nothing moved for `DURATION` (default 60s)")
	flags.MarkHidden("s3-idle-timeout")
	return f
}

// open returns the store of the set at loc: s3://BUCKET/PREFIX, or a folder.
func (f *s3Flags) open(ctx context.Context, loc string) (backupset.Store, error) {
	if err := f.check(loc); err != nil {
		return nil, err
	}
	if !s3store.IsLocation(loc) {
		return backupset.Folder{Dir: reachedOrAsGiven(loc)}, nil
	}
	opts := s3store.Options{Endpoint: f.endpoint, PathStyle: f.pathStyle, IdleTimeout: f.idleTimeout}
	if f.spool {
		opts.SpoolDir = spoolDir()
	}
	return s3store.Open(ctx, loc, opts)
}

// spoolDir is the cache folder (made, 0700, when missing), in which s3store keeps the
// blocks of an archive read whole, in files with no name; "" when there is none, and then
// blocks read twice are fetched twice. It passes the check of create's copies there
// (makeFixed): in a folder another user owns (sudo keeping HOME=/home/alice) she could put
// a symlink to a file system she reads raw, or serves herself, and read the archive as
// it is spooled.
func spoolDir() string {
	root, err := defaultCacheRoot()
	if err != nil || makeFixed(root) != nil {
		return ""
	}
	return root
}

// check is the one rule for what a command is told about S3 before it reaches a server: an
// s3:// location that cannot name a set, a path that is one mistyped (s3store.Mistyped), or
// an endpoint (--s3-endpoint, or
// AWS_ENDPOINT_URL_S3 when a location is in a bucket) that is not a plain http(s) URL, is a
// usage error (exit 2) of every command, and never echoes credentials. Commands call it
// while they check their flags.
func (f *s3Flags) check(locs ...string) error {
	remote := false
	for _, loc := range locs {
		if err := checkMistyped(loc); err != nil {
			return err
		}
		if !s3store.IsLocation(loc) {
			continue
		}
		remote = true
		if _, _, err := s3store.ParseLocation(loc); err != nil {
			return err
		}
	}
	if f.endpoint == "" && !remote {
		return nil
	}
	return s3store.CheckEndpoint(f.endpoint)
}

// checkMistyped refuses a path that is an s3:// location mistyped (s3store.Mistyped), for
// every command that takes a set or an archive, adopt's DIR too.
func checkMistyped(loc string) error {
	if !s3store.Mistyped(loc) {
		return nil
	}
	return fmt.Errorf("%s: not an s3:// location (want s3://BUCKET/PREFIX, in lower case, two slashes); a folder or file whose name starts with s3: is given as ./s3:…",
		format.QuoteName(loc))
}
