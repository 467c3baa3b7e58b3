package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// config is one simulation: hosts backing up rounds times each into one bucket.
type config struct {
	bin, versitygw string
	hosts, rounds  int
	// period is a round's length: the hosts' runs start spread over it, as cron lines at
	// different minutes of an hour.
	period   time.Duration
	killRate float64 // the share of runs killed mid-upload
	files    int     // files in each host's tree
	seed     uint64
	work     string
	log      io.Writer
}

// sim is a simulation under way, and what it saw.
type sim struct {
	cfg   config
	srv   *server
	hosts []*host

	mu      sync.Mutex
	creates []*run // every create run, in no order
	others  []*run // prunes and the monitor's sets
	// roundStart is when each round's first run started (index 0 is round 1).
	roundStart []time.Time
}

func (s *sim) logf(format string, args ...any) {
	if s.cfg.log != nil {
		fmt.Fprintf(s.cfg.log, format+"\n", args...)
	}
}

// simulate runs the fleet and returns what it saw; the checks are in check.go.
func simulate(ctx context.Context, cfg config) (*sim, error) {
	srv, err := startServer(cfg.versitygw, cfg.work)
	if err != nil {
		return nil, err
	}
	s := &sim{cfg: cfg, srv: srv}
	rng := rand.New(rand.NewPCG(cfg.seed, 1))
	for i := range cfg.hosts {
		h := &host{name: fmt.Sprintf("h%03d", i+1), dir: filepath.Join(cfg.work, "hosts", fmt.Sprintf("h%03d", i+1)),
			rng: rand.New(rand.NewPCG(cfg.seed, uint64(i)+2)), files: cfg.files}
		if err := h.makeTree(); err != nil {
			return s, err
		}
		s.hosts = append(s.hosts, h)
	}
	kills := pickKills(rng, cfg.hosts, cfg.rounds, cfg.killRate)
	bg, stopBg := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { s.pruneLoop(bg, rand.New(rand.NewPCG(cfg.seed, 0))) })
	wg.Go(func() { s.monitorLoop(bg) })
	for round := 1; round <= cfg.rounds; round++ {
		if err := s.round(ctx, round, kills); err != nil {
			stopBg()
			wg.Wait()
			return s, err
		}
		// Receipts keep whole seconds: the next round starts in a later second, so that the
		// rounds' backups can be told apart by age.
		time.Sleep(1100 * time.Millisecond)
	}
	stopBg()
	wg.Wait()
	return s, nil
}

// pickKills picks the runs to kill: each with probability rate, and at least one in a round
// before the last (its set's next run cleans up after it) and one in the last (its set
// ends stale), so that a small fleet exercises both.
func pickKills(rng *rand.Rand, hosts, rounds int, rate float64) map[[2]int]bool {
	kills := map[[2]int]bool{}
	for h := range hosts {
		for r := 1; r <= rounds; r++ {
			if rng.Float64() < rate {
				kills[[2]int{h, r}] = true
			}
		}
	}
	has := func(last bool) bool {
		for k := range kills {
			if (k[1] == rounds) == last {
				return true
			}
		}
		return false
	}
	if !has(false) && rounds > 1 {
		kills[[2]int{rng.IntN(hosts), 1 + rng.IntN(rounds-1)}] = true
	}
	if !has(true) {
		kills[[2]int{rng.IntN(hosts), rounds}] = true
	}
	return kills
}

// round starts every host's run once, spread over the period, and waits for them all.
func (s *sim) round(ctx context.Context, round int, kills map[[2]int]bool) error {
	s.mu.Lock()
	s.roundStart = append(s.roundStart, time.Now())
	s.mu.Unlock()
	errs := make(chan error, len(s.hosts))
	var wg sync.WaitGroup
	for i, h := range s.hosts {
		if round > 1 {
			if err := h.change(); err != nil {
				return err
			}
		}
		r := &run{host: h, agent: fmt.Sprintf("%s-r%d", h.name, round), round: round, kill: kills[[2]int{i, round}]}
		delay := time.Duration(int64(s.cfg.period) * int64(i) / int64(len(s.hosts)))
		wg.Go(func() {
			select {
			case <-ctx.Done():
				errs <- ctx.Err()
				return
			case <-time.After(delay):
			}
			if err := r.exec(ctx, s.srv, s.cfg.bin, h.createArgs()...); err != nil {
				errs <- fmt.Errorf("%s: %w", r.agent, err)
			}
			s.mu.Lock()
			s.creates = append(s.creates, r)
			s.mu.Unlock()
		})
	}
	wg.Wait()
	close(errs)
	s.logf("round %d: %d runs in %v", round, len(s.hosts), time.Since(s.roundStart[round-1]).Round(time.Millisecond))
	return <-errs
}

// pruneLoop prunes random hosts' sets while the rounds run, as an operator's or a
// retention job's prune would: it waits for the set's lock as the runs do.
func (s *sim) pruneLoop(ctx context.Context, rng *rand.Rand) {
	for n := 0; ctx.Err() == nil; n++ {
		h := s.hosts[rng.IntN(len(s.hosts))]
		r := &run{host: h, agent: fmt.Sprintf("%s-prune-%d", h.name, n)}
		if r.exec(context.WithoutCancel(ctx), s.srv, s.cfg.bin, "prune", "--keep-last", "3", "--wait", "2m", h.set()) == nil {
			s.mu.Lock()
			s.others = append(s.others, r)
			s.mu.Unlock()
		}
		sleepCtx(ctx, s.cfg.period/time.Duration(max(4, len(s.hosts)/5)))
	}
}

// monitorLoop runs backup sets over the fleet while the rounds run, as a monitoring cron
// line would: it must never disturb a run, and never fail to list.
func (s *sim) monitorLoop(ctx context.Context) {
	for n := 0; ctx.Err() == nil; n++ {
		r := &run{agent: fmt.Sprintf("monitor-%d", n)}
		if r.exec(context.WithoutCancel(ctx), s.srv, s.cfg.bin, "sets", "s3://"+bucket+"/hosts") == nil {
			s.mu.Lock()
			s.others = append(s.others, r)
			s.mu.Unlock()
		}
		sleepCtx(ctx, max(time.Second, s.cfg.period/5))
	}
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// mustWork makes a work folder, or uses the one given.
func mustWork(dir string) (string, func(), error) {
	if dir != "" {
		return dir, func() {}, os.MkdirAll(dir, 0o755)
	}
	dir, err := os.MkdirTemp("", "backup-fleet-")
	return dir, func() { os.RemoveAll(dir) }, err
}
