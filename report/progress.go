package report

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// pollInterval is how often the bar reads the engine's counters. The engine never pushes
// progress: polling atomic counters costs the hot path nothing.
const pollInterval = 150 * time.Millisecond

// Progress draws a progress bar of bytes read, polled from the engine. A nil *Progress draws
// nothing, so that callers need not ask twice whether a bar is shown.
type Progress struct {
	bar  *progressbar.ProgressBar
	poll func() (bytes, files int64)
	stop chan struct{}
	done sync.WaitGroup

	mu      sync.Mutex // orders SetTotal, from a scan's goroutine, against Stop
	stopped bool
}

// StartProgress draws on w until Stop. poll returns the bytes and files done so far; the
// total is unknown (a spinner) until SetTotal.
func StartProgress(w io.Writer, poll func() (bytes, files int64)) *Progress {
	p := &Progress{
		bar: progressbar.NewOptions64(-1,
			progressbar.OptionSetWriter(w),
			progressbar.OptionShowBytes(true),
			progressbar.OptionUseIECUnits(true),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(pollInterval),
			progressbar.OptionShowCount(),
			progressbar.OptionClearOnFinish(),
			// No spinner goroutine of the bar's own: it would draw again after Stop.
			progressbar.OptionSetSpinnerChangeInterval(0),
			progressbar.OptionSetDescription("counting"),
		),
		poll: poll,
		stop: make(chan struct{}),
	}
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
		case <-t.C:
			bytes, files := p.poll()
			p.bar.Describe(fmt.Sprintf("%d files", files))
			p.bar.Set64(bytes)
		}
	}
}

// SetTotal tells the bar how many bytes there are in all, once a scan has counted them, so
// that it can show a percentage and an ETA.
func (p *Progress) SetTotal(bytes int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.stopped {
		p.bar.ChangeMax64(max(bytes, 1))
	}
}

// Stop stops polling and clears the bar, leaving the line for the summary.
func (p *Progress) Stop() {
	if p == nil {
		return
	}
	close(p.stop)
	p.done.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	p.bar.Finish() // clears the line: OptionClearOnFinish
}
