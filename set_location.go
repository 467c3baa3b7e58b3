package main

import (
	"context"
	"path/filepath"

	"github.com/spf13/pflag"

	"backup/backupset"
	"backup/backupset/s3store"
)

// s3Flags say how to reach the server of an s3:// set, beyond the AWS configuration.
type s3Flags struct {
	endpoint  string
	pathStyle bool
}

// addS3Flags adds the flags of the commands that take a set location.
func addS3Flags(flags *pflag.FlagSet) *s3Flags {
	f := &s3Flags{}
	flags.StringVar(&f.endpoint, "s3-endpoint", "", "the S3 server's `URL`, for an s3:// set (default: $AWS_ENDPOINT_URL_S3, else AWS)")
	flags.BoolVar(&f.pathStyle, "s3-path-style", false, "name the bucket in the URL's path, not its host (most self-hosted servers)")
	return f
}

// open returns the store of the set at loc: s3://BUCKET/PREFIX, or a folder.
func (f *s3Flags) open(ctx context.Context, loc string) (backupset.Store, error) {
	if !s3store.IsLocation(loc) {
		dir, err := filepath.Abs(loc)
		if err != nil {
			return nil, err
		}
		return backupset.Folder{Dir: dir}, nil
	}
	if err := s3store.CheckEndpoint(f.endpoint); err != nil {
		return nil, err
	}
	return s3store.Open(ctx, loc, s3store.Options{Endpoint: f.endpoint, PathStyle: f.pathStyle})
}
