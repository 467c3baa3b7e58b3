package s3test

import (
	"bufio"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// Access is one request as the server's access log records it.
type Access struct {
	// Op is the S3 operation without versitygw's "s3_" ("PutObject", "ListObjectsV2").
	Op     string
	Bucket string
	// Key is the object's key; "" for a request on the bucket (a listing).
	Key string
	// Query is the request's query: a listing's prefix and delimiter, an upload's id.
	Query  url.Values
	Status int
	// Agent is the client's application id: the app/ID that the AWS SDK adds to its
	// User-Agent from AWS_SDK_UA_APP_ID; "" when it sent none.
	Agent string
}

// appID finds the application id in a User-Agent (with a space before it).
var appID = regexp.MustCompile(` app/([^ ]+)`)

// ReadAccessLog reads a versitygw access log: S3's server access log format, whose fields
// are separated by spaces (owner, bucket, [time], remote IP, requester, request id,
// operation, key, request URI, status, …, user agent, …). The User-Agent is not quoted, so
// only the fields before it are taken by position. Lines that are not a request (the
// "log starts" header) are skipped.
func ReadAccessLog(path string) ([]Access, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Access
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if a, ok := parseAccess(sc.Text()); ok {
			out = append(out, a)
		}
	}
	return out, sc.Err()
}

func parseAccess(line string) (Access, bool) {
	f := strings.Fields(line)
	if len(f) < 12 || !strings.HasPrefix(f[2], "[") || !strings.HasPrefix(f[7], "s3_") {
		return Access{}, false
	}
	status, err := strconv.Atoi(f[10])
	if err != nil {
		return Access{}, false
	}
	a := Access{Op: strings.TrimPrefix(f[7], "s3_"), Bucket: f[1], Status: status}
	if f[8] != "-" {
		a.Key = f[8]
	}
	if _, q, ok := strings.Cut(f[9], "?"); ok {
		a.Query, _ = url.ParseQuery(q)
	}
	if len(f) > 17 { // the User-Agent starts after the referrer, field 16
		if m := appID.FindStringSubmatch(" " + strings.Join(f[17:], " ")); m != nil {
			a.Agent = m[1]
		}
	}
	return a, true
}

// Foreign returns the requests of the agents in owns that reached beyond their set: owns
// maps an agent to the prefix of the one set it runs for ("hosts/h001/"), which owns exactly
// the keys directly under it. A request is foreign when its key is not one of those, or when
// it lists (objects or uploads) another prefix, or below the next "/" (no delimiter). The
// requests of agents not in owns are not judged.
func Foreign(log []Access, owns map[string]string) []Access {
	var out []Access
	for _, a := range log {
		prefix, ok := owns[a.Agent]
		if ok && !ownRequest(a, prefix) {
			out = append(out, a)
		}
	}
	return out
}

func ownRequest(a Access, prefix string) bool {
	if a.Key != "" {
		name, ok := strings.CutPrefix(a.Key, prefix)
		return ok && name != "" && !strings.Contains(name, "/")
	}
	switch a.Op {
	case "ListObjectsV2", "ListObjects", "ListMultipartUploads":
		return a.Query.Get("prefix") == prefix && a.Query.Get("delimiter") == "/"
	}
	return false // any other request on the bucket itself is no set's
}
