package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// The tree of the per-run cost measurement: 2,000 files of 4 to 36 KiB of text (about 40
// MiB), so that "1% changed" is 20 files, and each kind of run is made costRepeats times.
const (
	costFiles   = 2000
	costMinSize = 4 << 10
	costMaxSize = 36 << 10
	costRepeats = 3
)

// costStep is one kind of run of the measurement.
type costStep struct {
	label  string
	change bool     // 1% of the files are rewritten before each run
	args   []string // added to backup create's (restic: the command's)
}

// measureCost runs one host's runs one after the other, through the counting proxy: a first
// run, then full (--reread), unchanged and 1%-changed runs with the cache and without it,
// each costRepeats times; and, when restic is installed, restic's backups of the same tree
// to the same server, the named peer. It prints one row (the mean requests and bytes, the
// median times) per kind of run.
func measureCost(ctx context.Context, cfg config, w io.Writer) error {
	srv, err := startServer(cfg.versitygw, cfg.work)
	if err != nil {
		return err
	}
	defer srv.stop()
	h := &host{name: "h001", dir: filepath.Join(cfg.work, "hosts", "h001"), rng: rand.New(rand.NewPCG(cfg.seed, 2)),
		files: costFiles, minSize: costMinSize, maxSize: costMaxSize}
	if err := h.makeTree(); err != nil {
		return err
	}
	fmt.Fprintf(w, "one host, %d files (%s of text), each kind of run %d times, one after the other, through the counting proxy\n\n",
		costFiles, bytesText(float64(treeSize(h.tree()))), costRepeats)
	requestsHeader(w)
	steps := []costStep{
		{"first run", false, nil},
		{"full (--reread)", false, []string{"--reread"}},
		{"unchanged, cache", false, nil},
		{"1% changed, cache", true, nil},
		{"unchanged, --no-cache", false, []string{"--no-cache"}},
		{"1% changed, --no-cache", true, []string{"--no-cache"}},
	}
	n := 0
	for i, step := range steps {
		var runs []*run
		for range map[bool]int{true: 1, false: costRepeats}[i == 0] {
			if step.change {
				if err := h.changePercent(); err != nil {
					return err
				}
			}
			n++
			r := &run{host: h, agent: fmt.Sprintf("cost-%d", n)}
			args := append(append([]string{"create", "-q", "--output-dir", h.set()}, step.args...), "app")
			if err := r.exec(ctx, srv, cfg.bin, args...); err != nil || r.code != 0 {
				return fmt.Errorf("%s: %v %s", step.label, err, r.summary())
			}
			runs = append(runs, r)
		}
		requestsRow(w, costOfRuns(srv.proxy, "backup: "+step.label, runs))
	}
	return resticCost(ctx, srv, h, w)
}

// changePercent rewrites 1% of the host's files.
func (h *host) changePercent() error {
	for range max(1, h.files/100) {
		if err := h.writeFile(h.rng.IntN(h.files)); err != nil {
			return err
		}
	}
	return nil
}

// resticCost runs restic's backups of the host's tree to the same server, when restic is
// installed: the peer that deduplicates, so that it uploads only what changed.
func resticCost(ctx context.Context, srv *server, h *host, w io.Writer) error {
	bin, err := exec.LookPath("restic")
	if err != nil {
		fmt.Fprintln(w, "\n(restic is not installed: no peer rows)")
		return nil
	}
	repo := "s3:" + srv.proxy.srv.URL + "/" + bucket + "/restic"
	n := 0
	restic := func(args ...string) (*run, error) {
		n++
		r := &run{agent: fmt.Sprintf("restic-%d", n)}
		srv.proxy.anon(r.agent) // restic's client names no agent
		cmd := exec.CommandContext(ctx, bin, append([]string{"-r", repo, "-q"}, args...)...)
		cmd.Dir = h.dir
		cmd.Env = append(srv.env(r.agent, h.dir), "RESTIC_PASSWORD=fleet")
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("restic %v: %v: %s", args, err, out)
		}
		r.took, r.cpu = time.Since(start), cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime()
		return r, nil
	}
	if _, err := restic("init"); err != nil {
		return err
	}
	for i, step := range []costStep{{"first run", false, nil}, {"unchanged", false, nil}, {"1% changed", true, nil}} {
		var runs []*run
		for range map[bool]int{true: 1, false: costRepeats}[i == 0] {
			if step.change {
				if err := h.changePercent(); err != nil {
					return err
				}
			}
			r, err := restic("backup", "app")
			if err != nil {
				return err
			}
			runs = append(runs, r)
		}
		requestsRow(w, costOfRuns(srv.proxy, "restic: "+step.label, runs))
	}
	return nil
}

// treeSize is the bytes of the files below dir.
func treeSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
