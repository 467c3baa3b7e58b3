package main

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"time"
)

// perRun is the mean cost of a group of runs: requests by kind, bytes each way, and wall
// times.
type perRun struct {
	label    string
	runs     int
	requests map[string]float64
	up, down float64
	walls    []time.Duration
	cpus     []time.Duration
}

// costOfRuns sums what the proxy counted for each run's agent.
func costOfRuns(p *proxy, label string, runs []*run) perRun {
	out := perRun{label: label, requests: map[string]float64{}}
	for _, r := range runs {
		c := p.costOf(r.agent)
		for k, n := range c.requests {
			out.requests[k] += float64(n)
		}
		out.up += float64(c.up)
		out.down += float64(c.down)
		out.walls = append(out.walls, r.took)
		out.cpus = append(out.cpus, r.cpu)
		out.runs++
	}
	if out.runs > 0 {
		for k := range out.requests {
			out.requests[k] /= float64(out.runs)
		}
		out.up /= float64(out.runs)
		out.down /= float64(out.runs)
	}
	slices.Sort(out.walls)
	slices.Sort(out.cpus)
	return out
}

// quantile is the q-quantile of sorted durations.
func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[min(len(d)-1, int(q*float64(len(d))))]
}

// requestsHeader and requestsRow print a markdown table of per-run costs.
func requestsHeader(w io.Writer) {
	fmt.Fprintf(w, "| run | runs | %s | all | up | down | wall, median | wall, p95 | CPU, median |\n", strings.Join(kinds, " | "))
	fmt.Fprintf(w, "| --- | ---: |%s ---: | ---: | ---: | ---: | ---: | ---: |\n", strings.Repeat(" ---: |", len(kinds)))
}

func requestsRow(w io.Writer, c perRun) {
	var cells []string
	total := 0.0
	for _, k := range kinds {
		cells = append(cells, trim(c.requests[k]))
		total += c.requests[k]
	}
	fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s | %s | %s |\n", c.label, c.runs, strings.Join(cells, " | "), trim(total),
		bytesText(c.up), bytesText(c.down), ms(quantile(c.walls, 0.5)), ms(quantile(c.walls, 0.95)), ms(quantile(c.cpus, 0.5)))
}

func trim(f float64) string {
	s := fmt.Sprintf("%.1f", f)
	return strings.TrimSuffix(s, ".0")
}

func ms(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }

func bytesText(b float64) string {
	switch {
	case b >= 1<<20:
		return fmt.Sprintf("%.2f MiB", b/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", b/(1<<10))
	}
	return fmt.Sprintf("%.0f B", b)
}

// report prints what the simulation measured and found.
func (s *sim) report(w io.Writer, v *verdict, took time.Duration) {
	fmt.Fprintf(w, "fleet: %d hosts, %d rounds of %v, %d files a host, kill rate %.0f%%, in %v\n\n",
		s.cfg.hosts, s.cfg.rounds, s.cfg.period, s.cfg.files, 100*s.cfg.killRate, took.Round(time.Second))
	var first, later []*run
	for _, r := range s.creates {
		switch {
		case r.killed:
		case r.round == 1:
			first = append(first, r)
		default:
			later = append(later, r)
		}
	}
	requestsHeader(w)
	requestsRow(w, costOfRuns(s.srv.proxy, "first (full)", first))
	requestsRow(w, costOfRuns(s.srv.proxy, "later (changed, cache)", later))
	var prunes, monitors []*run
	for _, r := range s.others {
		if strings.HasPrefix(r.agent, "monitor-") {
			monitors = append(monitors, r)
		} else {
			prunes = append(prunes, r)
		}
	}
	requestsRow(w, costOfRuns(s.srv.proxy, "prune", prunes))
	requestsRow(w, costOfRuns(s.srv.proxy, "sets (all hosts)", monitors))
	fmt.Fprintln(w)
	s.load(w, took)
	for _, n := range v.notes {
		fmt.Fprintln(w, "- "+n)
	}
	for _, f := range v.failures {
		fmt.Fprintln(w, "FAIL: "+f)
	}
	if len(v.failures) == 0 {
		fmt.Fprintln(w, "ok: every assertion holds")
	}
}

// load says how busy the machine was: the CPU time of every backup process and of the
// server, against what the machine's cores had in the time the simulation took.
func (s *sim) load(w io.Writer, took time.Duration) {
	var runs time.Duration
	for _, r := range append(slices.Clone(s.creates), s.others...) {
		runs += r.cpu
	}
	server := s.srv.cpu()
	cores := runtime.NumCPU()
	fmt.Fprintf(w, "- CPU: backup processes %.1f s, versitygw %.1f s; %.0f%% of %d cores over %v\n",
		runs.Seconds(), server.Seconds(), 100*(runs+server).Seconds()/(took.Seconds()*float64(cores)), cores, took.Round(time.Second))
}
