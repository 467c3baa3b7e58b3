package main

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// TestAttackS3ListingOmitsAnArchive: a listing that leaves out an object that is there (a
// server whose bucket index lags, as Ceph RGW's may, or a proxy that lies) made prune take
// a complete run for one whose archive was deleted: it deleted that run's receipt, the only
// thing it judged missing, and left its archive alone in the set, a run no one can restore
// from LATEST and that is kept for ever as unknown, where --keep-last 2 kept it whole.
// Missing is what a look at the object says, not the listing's silence.
func TestAttackS3ListingOmitsAnArchive(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	for i := range 3 {
		makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: fmt.Sprint(i)}})
		mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "app"), exitComplete)
		time.Sleep(1100 * time.Millisecond) // archives of other seconds: names in order
	}
	names := setArchives(t, s.dir) // archive, receipt, archive, receipt…
	if len(names) != 6 {
		t.Fatalf("the set holds %q, want 3 runs", names)
	}
	second := names[2]

	u, _ := url.Parse(s.srv.Endpoint)
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ErrorLog = log.New(io.Discard, "", 0)
	contents := regexp.MustCompile(`<Contents>.*?</Contents>`)
	rp.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.Method != http.MethodGet || resp.Request.URL.Query().Get("list-type") != "2" {
			return nil
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		body = contents.ReplaceAllFunc(body, func(c []byte) []byte {
			if bytes.Contains(c, []byte("/"+second+"</Key>")) {
				return nil
			}
			return c
		})
		resp.Body = io.NopCloser(bytes.NewReader(body))
		resp.ContentLength = int64(len(body))
		resp.Header.Set("Content-Length", fmt.Sprint(len(body)))
		return nil
	}
	proxy := httptest.NewServer(rp)
	t.Cleanup(proxy.Close)

	r := backup(t, runOpts{dir: dir, env: s.env}, "prune", "--s3-endpoint", proxy.URL, "--keep-last", "2", s.loc)
	if _, err := os.Stat(filepath.Join(s.dir, second)); err != nil {
		t.Fatalf("the archive the listing left out: %v (prune: exit %d, %s%s)", err, r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(s.dir, names[3])); err != nil {
		t.Errorf("prune --keep-last 2 through a listing that leaves out %s deleted its receipt, leaving the archive alone (exit %d):\n%s%s",
			second, r.code, r.stdout, r.stderr)
	}
}
