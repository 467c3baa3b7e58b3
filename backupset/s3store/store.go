// Package s3store keeps a backup set under a prefix of an S3 bucket (AWS, or any server that
// speaks S3 and honours conditional writes: MinIO, Ceph RGW, versitygw…). It implements
// backupset.Store with S3's conditional requests, so that nothing rests on trust:
// If-None-Match: * creates a name once, If-Match: ETAG replaces or deletes only the version
// that was read, and the lock is an object taken and handed over the same way.
//
// Endpoint, region and credentials come the standard way (AWS_* variables, AWS_PROFILE and
// the shared config files); they are never part of a message this package returns.
package s3store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/logging"
	"github.com/aws/smithy-go/middleware"
)

// Scheme starts a set location in a bucket: s3://BUCKET/PREFIX.
const Scheme = "s3://"

// IsLocation says whether loc names a set in a bucket rather than a folder.
func IsLocation(loc string) bool { return strings.HasPrefix(loc, Scheme) }

// Options are how to reach the server, beyond what the AWS configuration says.
type Options struct {
	// Endpoint is the server's URL (http://127.0.0.1:7070); "" takes AWS_ENDPOINT_URL_S3,
	// AWS_ENDPOINT_URL or the configuration's, else AWS's own.
	Endpoint string
	// PathStyle addresses the bucket in the path (http://host/bucket/key) rather than in
	// the host name, as most self-hosted servers need.
	PathStyle bool
	// Attempts is how often a request is tried in all when the server fails (500, 503,
	// throttling, a reset connection), with exponential backoff between; 0 means
	// AWS_MAX_ATTEMPTS, else 5.
	Attempts int
	// IdleTimeout fails a request (to be retried) once no byte has moved on its
	// connection for that long; 0 means 60 s.
	IdleTimeout time.Duration
	// SpoolDir is the folder in which the objects opened for reading keep the blocks they
	// fetched, in files with no name, so that a block read twice is fetched once (see
	// spool.go); "" keeps none.
	SpoolDir string
}

// Store is a backup set under s3://Bucket/Prefix.
type Store struct {
	client *s3.Client
	bucket string
	prefix string // "" or ending in "/"
	loc    string
	// lockTTL is how long a lock object stands without being renewed; a run renews it
	// every third of that.
	lockTTL time.Duration
	now     func() time.Time
	// spoolDir is Options.SpoolDir.
	spoolDir string
	// idle is every request's deadline on progress; cleanup the time the requests of an
	// interrupted run share (see Detached).
	idle    time.Duration
	cleanup cleanupWindow
	// attempts is how often a request is tried in all (the SDK's setting), for the reads
	// of a body that the SDK does not retry.
	attempts int
}

// Mistyped says whether loc was meant for a bucket but is no s3:// location (S3://B/P,
// s3:/B/P, s3:B/P): taken for a path, it would name a folder "s3:" in the working folder,
// and a backup made there would seem to be in the bucket.
func Mistyped(loc string) bool {
	return !IsLocation(loc) && len(loc) >= 3 && strings.EqualFold(loc[:3], "s3:")
}

// ParseLocation splits s3://BUCKET/PREFIX. The prefix may be empty; it is a folder-like
// path without empty, . or .. segments, so that it names one place.
func ParseLocation(loc string) (bucket, prefix string, err error) {
	rest, ok := strings.CutPrefix(loc, Scheme)
	if !ok {
		return "", "", fmt.Errorf("%s: not an s3:// location", loc)
	}
	bucket, prefix, _ = strings.Cut(rest, "/")
	prefix = strings.TrimSuffix(prefix, "/")
	if bucket == "" {
		return "", "", fmt.Errorf("%s: no bucket named (want s3://BUCKET/PREFIX)", loc)
	}
	if !isBucketName(bucket) {
		// Not echoed: s3://KEY:SECRET@bucket would print the secret.
		return "", "", errors.New("s3:// location: not a bucket name (letters, digits, '.', '-' and '_'); " +
			"credentials belong in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	}
	if prefix == "" {
		return bucket, "", nil
	}
	for _, seg := range strings.Split(prefix, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "", "", fmt.Errorf("%s: the prefix has an empty, . or .. segment", loc)
		}
	}
	if strings.ContainsFunc(prefix, unicode.IsControl) {
		return "", "", fmt.Errorf("%q: the prefix holds a control character", loc)
	}
	if err := listable(prefix); err != nil {
		return "", "", fmt.Errorf("%q: the prefix %w", loc, err)
	}
	return bucket, prefix + "/", nil
}

// isBucketName says whether b can be a bucket's name: S3's letters, digits, '.' and '-',
// and the '_' and capitals that old buckets and self-hosted servers allow. Anything else
// (a user:password@ in front) is refused before it reaches a message or a server.
func isBucketName(b string) bool {
	for _, r := range b {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_') {
			return false
		}
	}
	return len(b) <= 255
}

// Open returns the store of the set at loc (s3://BUCKET/PREFIX). It does not reach the
// server: the first request does.
func Open(ctx context.Context, loc string, opt Options) (*Store, error) {
	bucket, prefix, err := ParseLocation(loc)
	if err != nil {
		return nil, err
	}
	// The SDK's own log lines (a fallback to IMDSv1…) would break the one line an error
	// gets; what matters reaches the caller as the error.
	load := []func(*config.LoadOptions) error{config.WithLogger(logging.Nop{})}
	if opt.Attempts == 0 && os.Getenv("AWS_MAX_ATTEMPTS") == "" {
		opt.Attempts = 5 // the SDK's 3 gives up on a server that restarts
	}
	if opt.Attempts > 0 {
		load = append(load, config.WithRetryMaxAttempts(opt.Attempts))
	}
	if opt.IdleTimeout <= 0 {
		opt.IdleTimeout = defaultIdleTimeout
	}
	load = append(load, config.WithHTTPClient(httpClient(opt.IdleTimeout)))
	if isLocalEndpoint(opt.Endpoint) {
		// A bucket cannot be a subdomain of an IP address or of localhost.
		opt.PathStyle = true
	}
	cfg, err := config.LoadDefaultConfig(ctx, load...)
	var cfgErr error
	if err != nil {
		// A configuration that cannot be loaded (a profile that is gone, a credentials file
		// left half written) is no usage error: the set cannot be read, as when the server
		// cannot be reached, and every request fails with it, so that a command reports it
		// as such (exit 1, the metrics saying unhealthy, the hooks run).
		cfgErr = fmt.Errorf("reading the AWS configuration: %w", err)
		cfg = aws.Config{Region: "us-east-1"}
		if opt.Attempts > 0 {
			cfg.RetryMaxAttempts = opt.Attempts
		}
	}
	if cfg.Region == "" {
		// Self-hosted servers ignore the region, but the signature needs one.
		cfg.Region = "us-east-1"
	}
	var configured string // the endpoint the SDK found itself (a shared config file's endpoint_url)
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		configured = aws.ToString(o.BaseEndpoint)
		if opt.Endpoint != "" {
			o.BaseEndpoint = aws.String(opt.Endpoint)
		}
		o.UsePathStyle = opt.PathStyle
		// Wrapped here, not in the configuration, whose loading adds a CA bundle to the
		// SDK's own client type only.
		o.HTTPClient = boundedClient{client: o.HTTPClient, idle: opt.IdleTimeout}
		if cfgErr != nil {
			o.APIOptions = append(o.APIOptions, failEvery(cfgErr))
		}
	})
	if opt.Endpoint == "" && configured != "" {
		// Checked as the flag and the variables are, before the SDK may echo it.
		if err := CheckEndpoint(configured); err != nil {
			return nil, fmt.Errorf("%s: the AWS configuration's endpoint_url: %w", loc, err)
		}
	}
	return &Store{client: client, bucket: bucket, prefix: prefix, loc: strings.TrimSuffix(Scheme+bucket+"/"+prefix, "/"),
		lockTTL: defaultLockTTL, now: time.Now, idle: opt.IdleTimeout, attempts: cmp.Or(cfg.RetryMaxAttempts, retry.DefaultMaxAttempts),
		spoolDir: opt.SpoolDir}, nil
}

// EnvEndpoint is the endpoint the SDK takes from the environment when none is given:
// AWS_ENDPOINT_URL_S3, else AWS_ENDPOINT_URL (every service's).
func EnvEndpoint() string {
	return cmp.Or(os.Getenv("AWS_ENDPOINT_URL_S3"), os.Getenv("AWS_ENDPOINT_URL"))
}

// isLocalEndpoint says whether the endpoint (or EnvEndpoint's) is an IP address or
// localhost.
func isLocalEndpoint(endpoint string) bool {
	if endpoint == "" {
		endpoint = EnvEndpoint()
	}
	u, err := url.Parse(endpoint)
	if err != nil || endpoint == "" {
		return false
	}
	return net.ParseIP(u.Hostname()) != nil || u.Hostname() == "localhost"
}

// CheckEndpoint refuses an endpoint URL that carries a user name, a password or a query:
// they would show in messages, and credentials belong in the AWS variables.
func CheckEndpoint(endpoint string) error {
	if endpoint == "" {
		endpoint = EnvEndpoint()
	}
	if endpoint == "" {
		return nil
	}
	u, err := url.Parse(endpoint)
	switch {
	case err != nil:
		return errors.New("the S3 endpoint is not a URL")
	case u.User != nil:
		return errors.New("the S3 endpoint URL holds a user name or password; give credentials in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	case u.RawQuery != "" || u.ForceQuery:
		// The SDK refuses such an endpoint at each request, echoing it whole, and a query
		// is where a token would be put.
		return errors.New("the S3 endpoint URL holds a query (?…); give credentials in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	case u.Opaque != "":
		// USER:PASSWORD@HOST, its scheme forgotten, parses as the scheme USER and the
		// opaque PASSWORD@HOST, which Redacted keeps.
		return errors.New("the S3 endpoint is not an http:// or https:// URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("the S3 endpoint %s: want an http:// or https:// URL", u.Redacted())
	}
	return nil
}

// CheckNameInBucket says why a set's source name cannot name its archives in a bucket, or
// nil: see listable.
func CheckNameInBucket(name string) error {
	if err := listable(name); err != nil {
		return fmt.Errorf("%q cannot name a set's archives in a bucket: it %w", name, err)
	}
	return nil
}

// listable says why s cannot be part of a key that a listing names again, or nil. A bucket
// lists its keys in XML 1.0, which cannot carry control characters, U+FFFE or U+FFFF
// (servers send U+FFFD, as Go's encoder does, or refuse), and keys are UTF-8: an archive
// named so would be written and activated, and then never listed by its name, so never
// pruned.
func listable(s string) error {
	if !utf8.ValidString(s) {
		return errors.New("is not UTF-8, as a key must be")
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == 0xfffe || r == 0xffff {
			return fmt.Errorf("holds %U, which a bucket's listing (XML) cannot carry", r)
		}
	}
	return nil
}

// Location returns s3://BUCKET/PREFIX.
func (s *Store) Location() string { return s.loc }

func (s *Store) key(name string) string { return s.prefix + name }

// nameOf returns the name in the set of a key the server listed, and whether the set owns
// it: a set owns exactly the keys directly under its prefix. A key in a deeper "folder"
// belongs to another set (s3://B/app does not own s3://B/app/sub's archives, and a set at
// the bucket's root owns none of the others'), and a key outside the prefix is a server
// answering for something it was not asked.
func (s *Store) nameOf(key string) (string, bool) {
	name, ok := strings.CutPrefix(key, s.prefix)
	return name, ok && name != "" && !strings.Contains(name, "/")
}

// failEvery makes every request of a client fail with err before it is sent.
func failEvery(err error) func(*middleware.Stack) error {
	return func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("backupConfigError",
			func(context.Context, middleware.InitializeInput, middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				return middleware.InitializeOutput{}, middleware.Metadata{}, err
			}), middleware.Before)
	}
}
