package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress shows a count going up: a bar with rate and ETA on a terminal,
// a plain line every few seconds otherwise (logs, CI).
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	bar   *progressbar.ProgressBar
	desc  string
	total int64
	bytes bool
	start time.Time
	last  time.Time
	n     int64
}

func newProgress(w io.Writer, desc string, total int64, bytes bool) *progress {
	p := &progress{w: w, desc: desc, total: total, bytes: bytes, start: time.Now()}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(w),
			progressbar.OptionShowBytes(bytes), progressbar.OptionSetDescription(desc),
			progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
	}
	return p
}

// set records that n of total are done.
func (p *progress) set(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n = n
	if p.bar != nil {
		p.bar.Set64(n)
		return
	}
	if time.Since(p.last) < 2*time.Second && n < p.total {
		return
	}
	p.last = time.Now()
	elapsed := time.Since(p.start).Seconds()
	rate := float64(n) / max(elapsed, 1e-9)
	// The rate and what is left only once there is a rate to tell: not
	// "0.0 MiB/s, ETA ?" in the first second.
	var tail string
	switch {
	case n >= p.total:
		tail = fmt.Sprintf(", done in %s", time.Since(p.start).Round(time.Millisecond))
	case elapsed >= 1 && rate > 0 && p.bytes:
		tail = fmt.Sprintf(", %.1f MiB/s, about %s left", rate/(1<<20), (time.Duration(float64(p.total-n)/rate) * time.Second).Round(time.Second))
	case elapsed >= 1 && rate > 0:
		tail = fmt.Sprintf(", %.1f/s, about %s left", rate, (time.Duration(float64(p.total-n)/rate) * time.Second).Round(time.Second))
	}
	if p.bytes {
		fmt.Fprintf(p.w, "%s: %.1f of %.1f MiB (%.0f%%)%s\n", p.desc, float64(n)/(1<<20),
			float64(p.total)/(1<<20), 100*float64(n)/float64(max(p.total, 1)), tail)
	} else {
		fmt.Fprintf(p.w, "%s: %d of %d (%.0f%%)%s\n", p.desc, n, p.total, 100*float64(n)/float64(max(p.total, 1)), tail)
	}
}

func (p *progress) finish() {
	if p.bar != nil {
		p.bar.Finish()
	}
}
