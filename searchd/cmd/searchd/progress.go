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
	eta := "?"
	if elapsed < 1 {
		rate = 0 // too early to tell
	} else if rate > 0 && n <= p.total {
		eta = (time.Duration(float64(p.total-n)/rate) * time.Second).Round(time.Second).String()
	}
	if p.bytes {
		fmt.Fprintf(p.w, "%s: %.1f of %.1f MiB (%.0f%%), %.1f MiB/s, ETA %s\n", p.desc, float64(n)/(1<<20),
			float64(p.total)/(1<<20), 100*float64(n)/float64(max(p.total, 1)), rate/(1<<20), eta)
	} else {
		fmt.Fprintf(p.w, "%s: %d of %d (%.0f%%), %.1f/s, ETA %s\n", p.desc, n, p.total,
			100*float64(n)/float64(max(p.total, 1)), rate, eta)
	}
}

func (p *progress) finish() {
	if p.bar != nil {
		p.bar.Finish()
	}
}
