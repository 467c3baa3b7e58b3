package main

import (
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"backup/backupset/s3store/s3test"
)

// server is one local versitygw (posix backend, access log on) and the proxy in front of
// it that every backup process talks to.
type server struct {
	cmd       *exec.Cmd
	root      string // the posix backend's folder: root/BUCKET/KEY
	accessLog string
	endpoint  string // versitygw's own
	proxy     *proxy
}

const bucket = "fleet"

// startServer starts versitygw in work, with a bucket, and the proxy.
func startServer(bin, work string) (*server, error) {
	root := filepath.Join(work, "s3")
	if err := os.MkdirAll(filepath.Join(root, bucket), 0o755); err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	s := &server{root: root, accessLog: filepath.Join(work, "access.log"), endpoint: "http://" + addr}
	s.cmd = exec.Command(bin, "--port", addr, "--access", s3test.AccessKey, "--secret", s3test.SecretKey,
		"--access-log", s.accessLog, "--quiet", "posix", root)
	logf, err := os.Create(filepath.Join(work, "versitygw.log"))
	if err != nil {
		return nil, err
	}
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("versitygw did not start listening on %s (see %s)", addr, logf.Name())
		}
	}
	s.proxy, err = newProxy(s.endpoint)
	return s, err
}

func (s *server) stop() {
	if s.proxy != nil {
		s.proxy.srv.Close()
	}
	s.cmd.Process.Signal(syscall.SIGKILL)
	s.cmd.Wait()
}

// env points backup at the proxy, as the agent (AWS_SDK_UA_APP_ID: the access log and the
// proxy tell the processes apart by it), with the local copies of archives in cache.
func (s *server) env(agent, cache string) []string {
	return append(os.Environ(),
		"AWS_ACCESS_KEY_ID="+s3test.AccessKey, "AWS_SECRET_ACCESS_KEY="+s3test.SecretKey,
		"AWS_REGION=us-east-1", "AWS_ENDPOINT_URL_S3="+s.proxy.srv.URL,
		"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null",
		"AWS_SDK_UA_APP_ID="+agent, "XDG_CACHE_HOME="+cache)
}

// cost is what one process (an agent) asked of the server: requests by kind, and the bytes
// of the bodies it sent and received.
type cost struct {
	requests   map[string]int
	up, down   int64
	firstStart time.Time
}

// The kinds of request a cost is counted in, in the order the report shows them.
var kinds = []string{"PUT", "POST", "part", "GET", "HEAD", "LIST", "DELETE"}

// proxy passes every request on to the server, counts it for its agent, and holds the
// multipart part of an agent marked to be killed: the part reaches the server, its answer
// never reaches the client, and the simulation is told, so that it kills the run mid-upload.
type proxy struct {
	srv *httptest.Server
	rp  *httputil.ReverseProxy

	mu    sync.Mutex
	costs map[string]*cost
	hold  map[string]chan struct{} // agent -> closed once its part reached the server
	// anonAgent counts the requests that name no agent (restic's client names none).
	anonAgent string
}

// anon counts the requests that name no agent as agent's, from now on.
func (p *proxy) anon(agent string) {
	p.mu.Lock()
	p.anonAgent = agent
	p.mu.Unlock()
}

var agentID = regexp.MustCompile(`(?:^| )app/([^ ]+)`)

func newProxy(target string) (*proxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	p := &proxy{costs: map[string]*cost{}, hold: map[string]chan struct{}{}}
	p.rp = httputil.NewSingleHostReverseProxy(u)
	p.rp.ErrorLog = log.New(io.Discard, "", 0) // the killed runs' connections break
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	return p, nil
}

// kind names what an S3 request does, in the report's words.
func kind(r *http.Request) string {
	q := r.URL.Query()
	switch {
	case r.Method == http.MethodPut && q.Has("partNumber"):
		return "part"
	case r.Method == http.MethodGet && (q.Get("list-type") == "2" || q.Has("uploads")):
		return "LIST"
	case r.Method == http.MethodDelete:
		return "DELETE" // DeleteObject, and AbortMultipartUpload
	}
	return r.Method // PUT, POST (create or complete an upload), GET, HEAD
}

// counter counts the bytes that pass through a body.
type counter struct {
	io.ReadCloser
	n *int64
	p *proxy
}

func (c counter) Read(b []byte) (int, error) {
	n, err := c.ReadCloser.Read(b)
	c.p.mu.Lock()
	*c.n += int64(n)
	c.p.mu.Unlock()
	return n, err
}

func (p *proxy) serve(w http.ResponseWriter, r *http.Request) {
	agent := ""
	if m := agentID.FindStringSubmatch(r.UserAgent()); m != nil {
		agent = m[1]
	}
	k := kind(r)
	p.mu.Lock()
	if agent == "" {
		agent = p.anonAgent
	}
	c := p.costs[agent]
	if c == nil {
		c = &cost{requests: map[string]int{}, firstStart: time.Now()}
		p.costs[agent] = c
	}
	c.requests[k]++
	held, hold := p.hold[agent]
	if hold && k == "part" {
		delete(p.hold, agent)
	}
	p.mu.Unlock()
	if r.Body != nil {
		r.Body = counter{r.Body, &c.up, p}
	}
	cw := &countingWriter{ResponseWriter: w, n: &c.down, p: p}
	if hold && k == "part" {
		p.rp.ServeHTTP(httptest.NewRecorder(), r) // the part is stored; its answer is not sent
		close(held)
		<-r.Context().Done() // until the run is killed
		return
	}
	p.rp.ServeHTTP(cw, r)
}

type countingWriter struct {
	http.ResponseWriter
	n *int64
	p *proxy
}

func (w *countingWriter) Write(b []byte) (int, error) {
	n, err := w.ResponseWriter.Write(b)
	w.p.mu.Lock()
	*w.n += int64(n)
	w.p.mu.Unlock()
	return n, err
}

// holdPart marks agent's first multipart part to be held; the channel is closed once it
// reached the server.
func (p *proxy) holdPart(agent string) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	ch := make(chan struct{})
	p.hold[agent] = ch
	return ch
}

// costOf returns a copy of what agent cost.
func (p *proxy) costOf(agent string) cost {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.costs[agent]
	if c == nil {
		return cost{requests: map[string]int{}}
	}
	out := *c
	out.requests = map[string]int{}
	for k, v := range c.requests {
		out.requests[k] = v
	}
	return out
}

// cpu is the server's user and system time so far, from /proc (clock ticks of 1/100 s).
func (s *server) cpu() time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	i := strings.LastIndexByte(string(data), ')')
	f := strings.Fields(string(data[i+1:]))
	if i < 0 || len(f) < 13 {
		return 0
	}
	var utime, stime int64
	fmt.Sscan(f[11], &utime) // fields 14 and 15, counted from the third after ')'
	fmt.Sscan(f[12], &stime)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
