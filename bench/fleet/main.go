// Command fleet simulates a fleet of hosts backing up to one bucket, and checks that they
// never interfere: one local versitygw, N hosts (separate backup processes, each with its own
// small changing tree, its own cache and its set s3://fleet/hosts/hNNN) running R scheduled
// rounds of backup create, a random share of the runs killed with SIGKILL mid-upload, and
// prune and backup sets running beside them. At the end it checks what issue 25 lists: every
// set's LATEST verifies; no request of one host reached another's keys (the server's access
// log); every abandoned upload was aborted by its own set's next run; locks were taken over
// only from killed runs; backup sets reports exactly the hosts whose last run was killed. It
// prints what each run cost (requests by kind, bytes each way, wall time), and exits 1 when
// an assertion fails.
//
// go run ./bench/fleet -bin bin/backup -hosts 200 (make fleet); -cost measures one host's
// runs (full, unchanged, 1% changed; with and without the cache) against restic.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"time"
)

func main() {
	cfg := config{log: os.Stderr}
	flag.StringVar(&cfg.bin, "bin", "bin/backup", "the backup binary")
	flag.StringVar(&cfg.versitygw, "versitygw", os.Getenv("VERSITYGW"), "the versitygw binary (default $VERSITYGW, else on PATH)")
	flag.IntVar(&cfg.hosts, "hosts", 200, "hosts in the fleet")
	flag.IntVar(&cfg.rounds, "rounds", 4, "scheduled runs of each host")
	flag.DurationVar(&cfg.period, "period", 20*time.Second, "a round's length: each host's run starts at its own point of it")
	flag.Float64Var(&cfg.killRate, "kill", 0.1, "the share of runs killed mid-upload")
	flag.IntVar(&cfg.files, "files", 40, "files in each host's tree (1 to 8 KiB of text each)")
	flag.Uint64Var(&cfg.seed, "seed", uint64(time.Now().UnixNano()), "the random seed (kills, trees, changes)")
	work := flag.String("work", "", "keep the work folder here (default: a temp folder, removed)")
	costMode := flag.Bool("cost", false, "measure one host's runs (full, unchanged, 1% changed, with and without the cache) against restic instead")
	flag.Parse()
	if err := fill(&cfg); err != nil {
		fmt.Fprintln(os.Stderr, "fleet:", err)
		os.Exit(2)
	}
	dir, cleanup, err := mustWork(*work)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleet:", err)
		os.Exit(1)
	}
	defer cleanup()
	cfg.work = dir
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *costMode {
		err = measureCost(ctx, cfg, os.Stdout)
	} else {
		var failed bool
		failed, err = runFleet(ctx, cfg, os.Stdout)
		if err == nil && failed {
			err = fmt.Errorf("an assertion failed (see above; seed %d)", cfg.seed)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleet:", err)
		cleanup()
		os.Exit(1)
	}
}

// fill finds the binaries.
func fill(cfg *config) error {
	if cfg.versitygw == "" {
		cfg.versitygw, _ = exec.LookPath("versitygw")
	}
	if cfg.versitygw == "" {
		return fmt.Errorf("no versitygw: set VERSITYGW or -versitygw")
	}
	abs, err := filepath.Abs(cfg.bin)
	if err != nil {
		return err
	}
	if _, err := os.Stat(abs); err != nil {
		return fmt.Errorf("-bin: %w (make build)", err)
	}
	cfg.bin = abs
	if cfg.hosts < 1 || cfg.rounds < 2 || cfg.files < 5 {
		return fmt.Errorf("want at least 1 host, 2 rounds and 5 files")
	}
	return nil
}

// runFleet simulates the fleet, checks it and prints the report; failed says an assertion
// failed.
func runFleet(ctx context.Context, cfg config, w io.Writer) (failed bool, err error) {
	start := time.Now()
	s, err := simulate(ctx, cfg)
	if s != nil && s.srv != nil {
		defer s.srv.stop()
	}
	if err != nil {
		return false, err
	}
	v := s.check(ctx)
	s.report(w, v, time.Since(start))
	return len(v.failures) > 0, nil
}
