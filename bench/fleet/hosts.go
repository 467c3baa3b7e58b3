package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// host is one simulated machine: its own source tree, its cache folder (XDG_CACHE_HOME is its
// folder), and its set.
type host struct {
	name  string // h001
	dir   string // holds app/, the tree it backs up, and cache/
	rng   *rand.Rand
	files int // how many files the tree keeps
	// minSize and maxSize bound a file's size; 0 means 1 and 8 KiB.
	minSize, maxSize int
}

func (h *host) set() string  { return "s3://" + bucket + "/hosts/" + h.name }
func (h *host) tree() string { return filepath.Join(h.dir, "app") }

// makeTree writes the host's first tree: files of text (1 to 8 KiB each, unless the host says
// otherwise), in a few folders.
func (h *host) makeTree() error {
	for i := range h.files {
		if err := h.writeFile(i); err != nil {
			return err
		}
	}
	return nil
}

func (h *host) writeFile(i int) error {
	path := filepath.Join(h.tree(), fmt.Sprintf("d%d", i%5), fmt.Sprintf("f%03d.txt", i))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	lo, hi := h.minSize, h.maxSize
	if hi == 0 {
		lo, hi = 1<<10, 8<<10
	}
	size := lo + h.rng.IntN(hi-lo)
	var b bytes.Buffer
	for b.Len() < size {
		fmt.Fprintf(&b, "%s line %d of file %d: %x\n", h.name, b.Len(), i, h.rng.Uint64())
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// change changes the tree between runs, as a machine's files change between hours: a few
// files rewritten, one removed, one added back.
func (h *host) change() error {
	for range 1 + h.files/20 {
		if err := h.writeFile(h.rng.IntN(h.files)); err != nil {
			return err
		}
	}
	i := h.rng.IntN(h.files)
	os.Remove(filepath.Join(h.tree(), fmt.Sprintf("d%d", i%5), fmt.Sprintf("f%03d.txt", i)))
	return h.writeFile(h.rng.IntN(h.files))
}

// run is one process of the simulation: what it was, how it ended, what it said.
type run struct {
	host   *host
	agent  string // hNNN-rK, hNNN-prune-K, monitor-K, hNNN-verify
	round  int    // the create's round, from 1; 0 for the other commands
	kill   bool   // to be killed mid-upload
	killed bool   // it was
	pid    int
	code   int
	took   time.Duration
	cpu    time.Duration // user and system time of the process
	stdout string
	stderr string
}

// exec runs backup with args as the run's agent; for a run to kill, it kills the process
// (SIGKILL) as soon as the proxy holds its first part, mid-upload.
func (r *run) exec(ctx context.Context, s *server, bin string, args ...string) error {
	cmd := exec.CommandContext(ctx, bin, args...)
	cache := ""
	if r.host != nil {
		cmd.Dir, cache = r.host.dir, r.host.dir
	}
	cmd.Env = s.env(r.agent, cache)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	var held <-chan struct{}
	if r.kill {
		held = s.proxy.holdPart(r.agent)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return err
	}
	r.pid = cmd.Process.Pid
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-held:
		cmd.Process.Signal(syscall.SIGKILL)
		err = <-done
		r.killed = true
	}
	r.took = time.Since(start)
	r.stdout, r.stderr = stdout.String(), stderr.String()
	r.code = cmd.ProcessState.ExitCode()
	r.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return err
	}
	return nil
}

// createArgs are a host's scheduled run: into its set, waiting for a prune that holds the
// lock, its cache in its own folder (XDG_CACHE_HOME).
func (h *host) createArgs() []string {
	return []string{"create", "-q", "--wait", "2m", "--output-dir", h.set(), "app"}
}

// summary is one line for a report of a failed process.
func (r *run) summary() string {
	return fmt.Sprintf("%s (pid %d) exit %d after %v: %s", r.agent, r.pid, r.code, r.took.Round(time.Millisecond), strings.TrimSpace(r.stderr))
}
