package report

import (
	"io"
	"math"
	"sync"
	"time"

	"golang.org/x/term"
)

// pollInterval is how often progress reads the engine's counters and redraws the line. The
// engine never pushes progress: polling atomic counters costs the hot path nothing.
const pollInterval = 200 * time.Millisecond

// eventInterval is the least time between two progress events of --json-lines.
const eventInterval = time.Second

// Snapshot is how far a run has got: what the engine's counters say, and the totals once a
// scan has counted them.
type Snapshot struct {
	Files      int64  `json:"files"`
	Bytes      int64  `json:"bytes"`
	TotalFiles *int64 `json:"total_files,omitempty"` // nil until known
	TotalBytes *int64 `json:"total_bytes,omitempty"` // nil until known
	Current    string `json:"-"`                     // the file being read, on the bar only
}

// ProgressOptions says where progress goes and where it comes from.
type ProgressOptions struct {
	Bar    io.Writer                                   // draw one line here (a terminal); nil: no bar
	Events *Events                                     // a "progress" event at most every second; nil: none
	Poll   func() (files, bytes int64, current string) // the engine's counters
	// Totals, when set, is asked at each tick until ok, for an engine that learns its
	// totals as it goes; SetTotal is for a caller that learns them elsewhere.
	Totals func() (files, bytes int64, ok bool)
}

// Progress shows a run's progress while it goes: a line on a terminal that always fits its
// width, and progress events. A nil *Progress shows nothing, so that callers need not ask
// twice whether progress is shown.
type Progress struct {
	opts ProgressOptions
	stop chan struct{}
	done sync.WaitGroup

	mu                     sync.Mutex // guards the totals, set from a scan's goroutine
	totalFiles, totalBytes int64
	totalKnown             bool
	rate                   rate
	lastEvent              time.Time
}

// StartProgress shows progress until Stop.
func StartProgress(opts ProgressOptions) *Progress {
	p := &Progress{opts: opts, stop: make(chan struct{})}
	p.done.Add(1)
	go p.run()
	return p
}

func (p *Progress) run() {
	defer p.done.Done()
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case now := <-t.C:
			p.tick(now)
		}
	}
}

func (p *Progress) tick(now time.Time) {
	files, bytes, current := p.opts.Poll()
	s := Snapshot{Files: files, Bytes: bytes, Current: current}
	p.mu.Lock()
	if !p.totalKnown && p.opts.Totals != nil {
		p.totalFiles, p.totalBytes, p.totalKnown = p.opts.Totals()
	}
	if p.totalKnown {
		s.TotalFiles, s.TotalBytes = &p.totalFiles, &p.totalBytes
	}
	eta, etaKnown := p.rate.update(now, bytes, s.TotalBytes)
	emit := now.Sub(p.lastEvent) >= eventInterval
	if emit {
		p.lastEvent = now
	}
	p.mu.Unlock()
	if p.opts.Bar != nil {
		line := RenderLine(s, eta.Round(time.Second), etaKnown, termWidth(p.opts.Bar))
		io.WriteString(p.opts.Bar, "\r"+line+"\x1b[K")
	}
	if emit {
		p.opts.Events.Emit("progress", s)
	}
}

// SetTotal tells progress how many files and bytes there are in all, once a scan has
// counted them, so that it can show a percentage and an ETA.
func (p *Progress) SetTotal(files, bytes int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.totalFiles, p.totalBytes, p.totalKnown = files, bytes, true
}

// Stop stops polling and clears the line, leaving it to the summary.
func (p *Progress) Stop() {
	if p == nil {
		return
	}
	close(p.stop)
	p.done.Wait()
	if p.opts.Bar != nil {
		io.WriteString(p.opts.Bar, "\r\x1b[K")
	}
}

// termWidth is the width of the terminal w is, read at every redraw so that a resized
// window is followed; 80 when w is not a terminal (--progress always into a pipe).
func termWidth(w io.Writer) int {
	if f, ok := w.(interface{ Fd() uintptr }); ok { // an *os.File, or a writer around one
		if width, _, err := term.GetSize(int(f.Fd())); err == nil && width > 0 {
			return width
		}
	}
	return 80
}

// rateWindow is how far back the rate is measured, and etaSmoothing the time constant with
// which the shown ETA follows the measured one: together they keep the ETA counting down
// steadily through bursts of reads (a large file's chunks, a folder of small files) while
// following a real change of speed within seconds.
const (
	rateWindow   = 10 * time.Second
	etaSmoothing = 5 * time.Second
)

// rate measures bytes per second over the last rateWindow and smooths the ETA.
type rate struct {
	start   time.Time
	samples []sample // oldest first, none older than rateWindow but the first
	eta     float64  // seconds; -1 until known
}

type sample struct {
	at    time.Time
	bytes int64
}

// update adds a reading and returns the ETA, once there is a total and two seconds of rate.
func (r *rate) update(now time.Time, bytes int64, total *int64) (time.Duration, bool) {
	if r.start.IsZero() {
		r.start, r.eta = now, -1
	}
	r.samples = append(r.samples, sample{now, bytes})
	for len(r.samples) > 2 && now.Sub(r.samples[1].at) >= rateWindow {
		r.samples = r.samples[1:]
	}
	first := r.samples[0]
	dt := now.Sub(first.at).Seconds()
	if total == nil || dt <= 0 || now.Sub(r.start) < 2*time.Second || bytes <= first.bytes {
		return 0, false
	}
	measured := float64(max(*total-bytes, 0)) / (float64(bytes-first.bytes) / dt)
	prev := r.samples[len(r.samples)-2].at
	step := now.Sub(prev).Seconds()
	if r.eta < 0 {
		r.eta = measured
	} else {
		counted := max(r.eta-step, 0)
		r.eta = counted + (1-math.Exp(-step/etaSmoothing.Seconds()))*(measured-counted)
	}
	return time.Duration(r.eta * float64(time.Second)), true
}
