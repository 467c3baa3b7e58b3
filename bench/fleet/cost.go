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

// costFiles is the tree of the per-run cost measurement: 1,000 files of 1 to 8 KiB of text,
// about 4.4 MiB, so that "1% changed" is 10 files.
const costFiles = 1000

// measureCost runs one host's runs one after the other, through the counting proxy: a
// first (full) run, then an unchanged and a 1%-changed run with the cache and without it;
// and, when restic is installed, restic's backup of the same trees to the same server,
// the named peer. It prints one row per run.
func measureCost(ctx context.Context, cfg config, w io.Writer) error {
	srv, err := startServer(cfg.versitygw, cfg.work)
	if err != nil {
		return err
	}
	defer srv.stop()
	h := &host{name: "h001", dir: filepath.Join(cfg.work, "hosts", "h001"), rng: rand.New(rand.NewPCG(cfg.seed, 2)), files: costFiles}
	if err := h.makeTree(); err != nil {
		return err
	}
	onePercent := func() error {
		for range costFiles / 100 {
			if err := h.writeFile(h.rng.IntN(costFiles)); err != nil {
				return err
			}
		}
		return nil
	}
	steps := []struct {
		label  string
		change func() error
		extra  []string
	}{
		{"full (first run)", nil, nil},
		{"unchanged, cache", nil, nil},
		{"1% changed, cache", onePercent, nil},
		{"unchanged, --no-cache", nil, []string{"--no-cache"}},
		{"1% changed, --no-cache", onePercent, []string{"--no-cache"}},
	}
	fmt.Fprintf(w, "one host, %d files (%s), one run after the other through the counting proxy\n\n", costFiles, bytesText(float64(treeSize(h.tree()))))
	requestsHeader(w)
	for i, step := range steps {
		if step.change != nil {
			if err := step.change(); err != nil {
				return err
			}
		}
		r := &run{host: h, agent: fmt.Sprintf("cost-%d", i)}
		args := append(append(h.createArgs()[:len(h.createArgs())-1], step.extra...), "app")
		if err := r.exec(ctx, srv, cfg.bin, args...); err != nil || r.code != 0 {
			return fmt.Errorf("%s: %v %s", step.label, err, r.summary())
		}
		requestsRow(w, costOfRuns(srv.proxy, "backup: "+step.label, []*run{r}))
	}
	return resticCost(ctx, cfg, srv, h, onePercent, w)
}

// resticCost runs restic's backups of the host's tree to the same server, when restic is
// installed: the peer that deduplicates, so uploads only what changed.
func resticCost(ctx context.Context, cfg config, srv *server, h *host, change func() error, w io.Writer) error {
	bin, err := exec.LookPath("restic")
	if err != nil {
		fmt.Fprintln(w, "\n(restic is not installed: no peer row)")
		return nil
	}
	repo := "s3:" + srv.proxy.srv.URL + "/" + bucket + "/restic"
	restic := func(agent string, args ...string) (*run, error) {
		cmd := exec.CommandContext(ctx, bin, append([]string{"-r", repo, "-q"}, args...)...)
		cmd.Dir = h.dir
		cmd.Env = append(srv.env(agent, h.dir), "RESTIC_PASSWORD=fleet", "AWS_DEFAULT_REGION=us-east-1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("restic %v: %v: %s", args, err, out)
		}
		return &run{agent: agent}, nil
	}
	srv.proxy.anon("restic-init")
	if _, err := restic("", "init"); err != nil {
		return err
	}
	for i, label := range []string{"full (first run)", "unchanged", "1% changed"} {
		if i == 2 {
			if err := change(); err != nil {
				return err
			}
		}
		srv.proxy.anon(fmt.Sprintf("restic-%d", i))
		start := time.Now()
		r, err := restic("", "backup", "app")
		if err != nil {
			return err
		}
		r.agent, r.took = fmt.Sprintf("restic-%d", i), time.Since(start)
		requestsRow(w, costOfRuns(srv.proxy, "restic: "+label, []*run{r}))
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
