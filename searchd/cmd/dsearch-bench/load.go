package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"dsearch/searchd/embed"
	"dsearch/searchd/internal/sample"
	"dsearch/searchd/sqlite"
	"dsearch/shared/api"
	"dsearch/shared/client"
)

// loadOptions configure the load mode: clients over the real socket
// against a real `searchd serve` with the real model.
type loadOptions struct {
	searchd  string // the searchd binary
	data     string // the benchmark database (copied, never changed)
	model    string
	clients  []int
	duration time.Duration // per phase
	importN  int           // messages of the concurrent import; 0: none
}

// loadQueries are the load mode's searches: the fixed set in every mode,
// plus the same words under a channel, an author and a time filter.
func loadQueries() []url.Values {
	var out []url.Values
	filters := []url.Values{
		{},
		{"channel": {"810000000000000003"}},
		{"author": {"820000000000000004"}},
		{"since": {"2022-01-01"}, "until": {"2023-01-01"}},
	}
	for i, q := range queries {
		for _, mode := range []string{"lexical", "semantic", "hybrid", "pipeline"} {
			v := url.Values{"q": {q.Query}, "mode": {mode}}
			if len(q.Keywords) > 0 {
				v["keywords"] = q.Keywords
			}
			// Each query gets each filter in some mode, and each mode
			// every filter across the set.
			for k, f := range filters[(i+len(mode))%len(filters)] {
				v[k] = f
			}
			out = append(out, v)
		}
	}
	return out
}

// sampleResult is one request's outcome.
type sampleResult struct {
	mode, filter string
	took         time.Duration
	embedMs      float64 // the server's query embedding time
	embedded     int     // message texts embedded on the fly
	status       int     // 0 when it succeeded
}

func runLoad(o loadOptions) error {
	ctx := context.Background()
	cfg, err := embed.LoadConfig(o.model)
	if err != nil {
		return err
	}
	dir := filepath.Join(filepath.Dir(filepath.Clean(o.data)), "load-data")
	fmt.Printf("copying %s to %s...\n", o.data, dir)
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := copyDir(o.data, dir); err != nil {
		return err
	}
	if err := prepareLoad(ctx, dir, cfg.Name, cfg.Dimension); err != nil {
		return err
	}
	var importDir string
	if o.importN > 0 {
		importDir = filepath.Join(filepath.Dir(dir), fmt.Sprintf("load-import-%d", o.importN))
		if _, err := os.Stat(filepath.Join(importDir, ".done")); err != nil {
			if _, err := sample.WriteSynthetic(importDir, sample.Synthetic{Messages: o.importN, Channels: 2, FirstChannel: 100,
				Users: 12, Seed: 2, ReplyRate: 0.08}); err != nil {
				return err
			}
			os.WriteFile(filepath.Join(importDir, ".done"), nil, 0o600)
		}
	}

	run := filepath.Join(dir, "run")
	if err := os.MkdirAll(run, 0o700); err != nil {
		return err
	}
	sock := filepath.Join(run, "s.sock")
	srv := exec.Command(o.searchd, "serve", "--data", dir, "--socket", sock, "--model", o.model, "--log-level", "warn")
	srv.Stdout, srv.Stderr = os.Stdout, os.Stderr
	if err := srv.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() { srv.Wait(); close(exited) }()
	defer func() {
		srv.Process.Signal(os.Interrupt)
		<-exited
	}()
	if err := waitReady(ctx, sock, exited); err != nil {
		return err
	}
	fmt.Printf("searchd ready: %d MiB resident\n", rss(srv.Process.Pid)>>20)

	qs := loadQueries()
	filtered := 0
	for _, v := range qs {
		if filterName(v) != "none" {
			filtered++
		}
	}
	fmt.Printf("\n%d searches (%d queries × 4 modes, %d of them filtered by channel, author or time), each client going through them in its own order, %s per phase\n",
		len(qs), len(queries), filtered, o.duration)
	phases := []bool{false}
	if importDir != "" {
		phases = append(phases, true)
	}
	for _, withImport := range phases {
		for _, n := range o.clients {
			var imp *exec.Cmd
			if withImport {
				imp = exec.Command(o.searchd, "import", "--data", dir, "--log-level", "warn", importDir)
				imp.Stdout, imp.Stderr = io.Discard, os.Stderr
				if err := imp.Start(); err != nil {
					return err
				}
			}
			cpu0 := cpuTime(srv.Process.Pid)
			res, peak, wall := loadPhase(ctx, sock, srv.Process.Pid, qs, n, o.duration)
			cores := (cpuTime(srv.Process.Pid) - cpu0).Seconds() / wall.Seconds()
			if imp != nil {
				imp.Process.Signal(os.Interrupt) // resumable: the next phase continues it
				imp.Wait()
			}
			label := fmt.Sprintf("%d clients", n)
			if withImport {
				label += ", import running"
			}
			report(label, res, wall, cores)
			settle := rss(srv.Process.Pid)
			time.Sleep(5 * time.Second)
			fmt.Printf("  resident: %d MiB peak, %d MiB at the end, %d MiB 5 s later\n", peak>>20, settle>>20, rss(srv.Process.Pid)>>20)
		}
	}
	return nil
}

// loadPhase runs n clients for d, each going through the searches from
// its own offset, so every mode runs in every moment of the phase.
func loadPhase(ctx context.Context, sock string, pid int, qs []url.Values, n int, d time.Duration) ([]sampleResult, int64, time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var mu sync.Mutex
	var all []sampleResult
	var peak int64
	stop := make(chan struct{})
	go func() {
		for {
			peak = max(peak, rss(pid))
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	start := time.Now()
	var wg sync.WaitGroup
	for c := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := client.New(sock)
			r := rand.New(rand.NewPCG(uint64(c), 3))
			order := r.Perm(len(qs))
			for i := 0; ctx.Err() == nil; i++ {
				v := qs[order[i%len(qs)]]
				t := time.Now()
				resp, err := cl.Search(ctx, v)
				if ctx.Err() != nil {
					return // cut by the end of the phase: not counted
				}
				s := sampleResult{mode: v.Get("mode"), filter: filterName(v), took: time.Since(t)}
				if err != nil {
					s.status = -1
					var ae *api.Error
					if errors.As(err, &ae) {
						s.status = ae.Status
					}
				} else {
					s.embedMs, s.embedded = resp.QueryEmbedMillis, resp.EmbeddedMessages
				}
				mu.Lock()
				all = append(all, s)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	close(stop)
	return all, peak, wall
}

func filterName(v url.Values) string {
	for _, k := range []string{"channel", "author", "since"} {
		if v.Has(k) {
			return k
		}
	}
	return "none"
}

func report(label string, res []sampleResult, wall time.Duration, cores float64) {
	var ok, failed int
	statuses := map[int]int{}
	for _, s := range res {
		if s.status == 0 {
			ok++
		} else {
			failed++
			statuses[s.status]++
		}
	}
	fmt.Printf("\n%s: %d requests in %s, %.1f requests/s, %d failed %v; searchd used %.2f cores\n", label, len(res),
		wall.Round(time.Millisecond), float64(ok)/wall.Seconds(), failed, statuses, cores)
	fmt.Printf("  %-9s %6s %9s %9s %9s %11s %9s\n", "mode", "n", "p50", "p95", "max", "embed p95", "on the fly")
	for _, mode := range []string{"lexical", "semantic", "hybrid", "pipeline", "all"} {
		var lat []time.Duration
		var emb []float64
		var fly int
		for _, s := range res {
			if s.status != 0 || mode != "all" && s.mode != mode {
				continue
			}
			lat = append(lat, s.took)
			if s.mode != "lexical" {
				emb = append(emb, s.embedMs)
			}
			fly += s.embedded
		}
		if len(lat) == 0 {
			continue
		}
		slices.Sort(lat)
		slices.Sort(emb)
		embP95 := "-"
		if len(emb) > 0 {
			embP95 = fmt.Sprintf("%.2f ms", emb[min(len(emb)-1, int(0.95*float64(len(emb))))])
		}
		fmt.Printf("  %-9s %6d %9s %9s %9s %11s %9.1f\n", mode, len(lat), ms(pct(lat, 0.5)), ms(pct(lat, 0.95)), ms(lat[len(lat)-1]),
			embP95, float64(fly)/float64(len(lat)))
	}
}

// waitReady waits for the socket to answer and the keyword index to load
// (until then keyword search runs on FTS5, which is not what is timed).
func waitReady(ctx context.Context, sock string, exited <-chan struct{}) error {
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return errors.New("searchd exited")
		default:
		}
		if m, err := metric(ctx, sock, "dsearch_keyword_index_messages"); err == nil && m > 0 {
			if b, err := metric(ctx, sock, "dsearch_embedding_backlog_messages"); err == nil && b == 0 {
				return nil
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	return errors.New("searchd not ready after 5 minutes")
}

// metric reads one gauge from GET /v1/metrics.
func metric(ctx context.Context, sock, name string) (float64, error) {
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
	defer hc.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, "GET", "http://searchd.sock/v1/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	text, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(text), "\n") {
		if rest, ok := strings.CutPrefix(line, name+" "); ok {
			return strconv.ParseFloat(strings.TrimSpace(rest), 64)
		}
	}
	return 0, fmt.Errorf("no metric %s", name)
}

// prepareLoad makes the copied database look fully embedded by the
// model: the random vectors take its name, and every message gets a
// random vector, as after a finished embedding job. Then the job is idle
// until the import brings new messages, and no query embeds messages on
// the fly but those.
func prepareLoad(ctx context.Context, dir, model string, dim int) error {
	db, err := sqlite.Open(ctx, dir) // migrates
	if err != nil {
		return err
	}
	if have, _ := db.Meta(ctx, "embedding_dim"); have != strconv.Itoa(dim) {
		db.Close()
		return fmt.Errorf("the benchmark database has %s-dimensional vectors; the model needs %d (make it with dsearch-bench --dim %d)", have, dim, dim)
	}
	db.Close()
	raw, err := sql.Open("sqlite", "file:"+filepath.Join(dir, sqlite.FileName)+"?_pragma=busy_timeout(10000)&_pragma=synchronous(OFF)")
	if err != nil {
		return err
	}
	defer raw.Close()
	// int8 components uniform in [-128, 127] have a standard deviation
	// of about 74: this scale makes the vectors about unit length.
	scale := make([]byte, 4)
	bits := math.Float32bits(float32(1 / (74 * math.Sqrt(float64(dim)))))
	scale[0], scale[1], scale[2], scale[3] = byte(bits), byte(bits>>8), byte(bits>>16), byte(bits>>24)
	for _, q := range []string{
		`UPDATE meta SET value = ? WHERE key = 'embedding_model'`,
		`UPDATE segment_vectors SET windowed = 1`,
		`INSERT INTO message_vectors (message_id, vector)
			SELECT id, CAST(? || randomblob(` + strconv.Itoa(dim) + `) AS BLOB) FROM messages m
			WHERE NOT EXISTS (SELECT 1 FROM message_vectors v WHERE v.message_id = m.id)`,
	} {
		var arg any = model
		if strings.Contains(q, "randomblob") {
			arg = scale
		} else if !strings.Contains(q, "?") {
			arg = nil
		}
		args := []any{}
		if arg != nil {
			args = append(args, arg)
		}
		if _, err := raw.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("prepare the load database: %w", err)
		}
	}
	return nil
}

func copyDir(from, to string) error {
	if err := os.MkdirAll(to, 0o700); err != nil {
		return err
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		in, err := os.Open(filepath.Join(from, e.Name()))
		if err != nil {
			return err
		}
		out, err := os.OpenFile(filepath.Join(to, e.Name()), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err == nil {
			_, err = io.Copy(out, in)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
		}
		in.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// rss is a process's resident memory, from /proc (Linux).
func rss(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// cpuTime is a process's user and system CPU time, from /proc (Linux;
// clock ticks of 1/100 s).
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command name, which is in parentheses.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
