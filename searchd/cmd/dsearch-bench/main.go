// Command dsearch-bench measures search latency at the blog's scale: an
// imported 650,000-message database (make bench imports one), with random
// unit vectors standing in for 29,000 embedded segments and their
// messages (1,024 dimensions, bge-m3's size). It reports p50/p95/max per
// mode over a fixed query set, and resident memory.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	_ "modernc.org/sqlite"

	"dsearch/searchd/embed"
	"dsearch/searchd/index"
	"dsearch/searchd/internal/memlimit"
	"dsearch/searchd/lexical"
	"dsearch/searchd/search"
	"dsearch/searchd/sqlite"
)

var (
	profile  *os.File
	onlyMode search.Mode
	verbose  bool
	filter   sqlite.Filter // given to every timed search (-channels, -since, -until)
)

// queries is the fixed set: words of the synthetic vocabulary, some with
// keywords and filters, as a user would search.
var queries = []search.Request{
	{Query: "이사 집 전세"},
	{Query: "보일러 수리"},
	{Query: "ranked game tonight", Keywords: []string{"game"}},
	{Query: "deploy server bug deadline"},
	{Query: "치킨 맥주 저녁"},
	{Query: "coding interview", Keywords: []string{"면접"}},
	{Query: "금리 환율 주식"},
	{Query: "weather coffee weekend"},
}

func main() {
	data := flag.String("data", "build/bench-data", "data directory of an imported database")
	segments := flag.Int("segments", 29000, "segments given vectors")
	dim := flag.Int("dim", 1024, "vector dimension")
	iterations := flag.Int("n", 3, "runs of the query set per mode")
	model := flag.String("model", "", "a real model, to time query embedding")
	ortLib := flag.String("ort-library", os.Getenv("DSEARCH_ORT_LIBRARY"), "ONNX Runtime directory")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the timed searches here")
	only := flag.String("mode", "", "time only this mode")
	flag.BoolVar(&verbose, "v", false, "print each query's latency")
	load := flag.String("load", "", "load mode: comma-separated client counts (1,8,50) against `searchd serve` over its socket (needs --model)")
	searchdBin := flag.String("searchd", "bin/searchd", "load mode: the searchd binary")
	duration := flag.Duration("duration", 15*time.Second, "load mode: length of each phase")
	importN := flag.Int("import", 20000, "load mode: messages of the import run beside the clients in a second round (0: none)")
	channels := flag.String("channels", "", "restrict every timed search to these channel IDs (comma-separated)")
	flag.Int64Var(&filter.Since, "since", 0, "restrict every timed search to messages at or after this time (µs)")
	flag.Int64Var(&filter.Until, "until", 0, "restrict every timed search to messages at or before this time (µs)")
	memLimit := flag.Int("memory-limit", 384, "soft limit of the Go heap in MiB, or a quarter above the live heap, as searchd serve sets it, when GOMEMLIMIT is not set (0: none)")
	flag.Parse()
	if *memLimit > 0 && os.Getenv("GOMEMLIMIT") == "" {
		go memlimit.Follow(context.Background(), int64(*memLimit)<<20, 5*time.Second)
	}
	for _, f := range strings.FieldsFunc(*channels, func(r rune) bool { return r == ',' }) {
		id, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil {
			fmt.Fprintln(os.Stderr, "dsearch-bench: --channels wants channel IDs, like 3,5")
			os.Exit(2)
		}
		filter.Channels = append(filter.Channels, id)
	}
	if *load != "" {
		o := loadOptions{searchd: *searchdBin, data: *data, model: *model, duration: *duration, importN: *importN}
		for _, f := range strings.Split(*load, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				fmt.Fprintln(os.Stderr, "dsearch-bench: --load wants client counts, like 1,8,50")
				os.Exit(2)
			}
			o.clients = append(o.clients, n)
		}
		if *model == "" {
			fmt.Fprintln(os.Stderr, "dsearch-bench: --load needs --model")
			os.Exit(2)
		}
		if err := runLoad(o); err != nil {
			fmt.Fprintln(os.Stderr, "dsearch-bench:", err)
			os.Exit(1)
		}
		return
	}
	onlyMode = search.Mode(*only)
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "dsearch-bench:", err)
			os.Exit(1)
		}
		profile = f
	}
	if err := run(*data, *segments, *dim, *iterations, *model, *ortLib); err != nil {
		fmt.Fprintln(os.Stderr, "dsearch-bench:", err)
		os.Exit(1)
	}
}

func run(data string, segments, dim, iterations int, modelDir, ortLib string) (err error) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, data)
	if err != nil {
		return err
	}
	defer db.Close()
	name := fmt.Sprintf("random-%d-%d-q8", dim, segments)
	if have, _ := db.Meta(ctx, "embedding_model"); have != name {
		fmt.Printf("filling random vectors for %d segments and their messages...\n", segments)
		start := time.Now()
		if err := fill(ctx, filepath.Join(data, sqlite.FileName), db, name, segments, dim); err != nil {
			return err
		}
		fmt.Printf("filled in %s\n", time.Since(start).Round(time.Second))
	}
	start := time.Now()
	matrix, err := index.LoadMatrix(ctx, db, dim)
	if err != nil {
		return err
	}
	fmt.Printf("matrix: %d × %d loaded in %s\n", matrix.Len(), dim, time.Since(start).Round(time.Millisecond))
	heapBefore := liveHeap()
	start = time.Now()
	kw := &index.Keywords{DB: db}
	if err := kw.Load(ctx); err != nil {
		return err
	}
	fmt.Printf("keyword index: %d messages loaded in %s, %d MiB of heap\n", kw.Len(),
		time.Since(start).Round(time.Millisecond), (liveHeap()-heapBefore)>>20)
	heapBefore, start = liveHeap(), time.Now()
	members := &index.Memberships{DB: db}
	if err := members.Load(ctx); err != nil {
		return err
	}
	fmt.Printf("segment memberships: %d messages loaded in %s, %d MiB of heap\n", members.Len(),
		time.Since(start).Round(time.Millisecond), (liveHeap()-heapBefore)>>20)
	svc := &search.Service{DB: db, Matrix: matrix, Embedder: randomEmbedder{dim}, Config: search.DefaultConfig(), Keywords: kw,
		Memberships: members}
	runtime.GC()
	if onlyMode == "" || onlyMode == search.Lexical {
		if err := keywordIndexAlone(ctx, db, kw, svc.Config.Window, iterations); err != nil {
			return err
		}
	}

	fmt.Printf("\n%d queries × %d runs per mode, excluding query embedding:\n", len(queries), iterations)
	if !filter.Empty() {
		fmt.Printf("every search filtered to channels %v, time %d–%d µs\n", filter.Channels, filter.Since, filter.Until)
	}
	fmt.Printf("%-9s %9s %9s %9s %9s %13s\n", "mode", "requests", "p50", "p95", "max", "CPU/request")
	if profile != nil {
		pprof.StartCPUProfile(profile)
	}
	for _, mode := range []search.Mode{search.Lexical, search.Semantic, search.Hybrid, search.Pipeline} {
		if onlyMode != "" && mode != onlyMode {
			continue
		}
		var lat []time.Duration
		cpu := selfCPU()
		for it := 0; it < iterations; it++ {
			for _, q := range queries {
				q.Mode, q.Filter = mode, filter
				t := time.Now()
				if _, err := svc.Search(ctx, q); err != nil {
					return fmt.Errorf("%s %q: %w", mode, q.Query, err)
				}
				lat = append(lat, time.Since(t))
				if verbose {
					fmt.Printf("  %-9s %8s  %q %q\n", mode, ms(lat[len(lat)-1]), q.Query, q.Keywords)
				}
			}
		}
		perRequest := (selfCPU() - cpu) / time.Duration(len(lat))
		slices.Sort(lat)
		fmt.Printf("%-9s %9d %9s %9s %9s %13s\n", mode, len(lat), ms(pct(lat, 0.5)), ms(pct(lat, 0.95)), ms(lat[len(lat)-1]), ms(perRequest))
	}
	if profile != nil {
		pprof.StopCPUProfile()
	}
	if err := paging(ctx, svc, iterations); err != nil {
		return err
	}
	fmt.Printf("\npeak resident memory: %d MiB\n", peakRSS()>>20)
	if onlyMode == "" || onlyMode == search.Semantic {
		// Last: its matrix is not searchd's and would swell the peaks above.
		defer func() {
			if err == nil {
				err = grownMatrix(ctx, db, dim, iterations)
			}
		}()
	}

	if modelDir != "" {
		// One thread per inference, as searchd serve runs it.
		m, err := embed.Load(modelDir, embed.Options{Backend: embed.ORT, ORTLibrary: ortLib, Threads: 1})
		if err != nil {
			return err
		}
		defer m.Close()
		embedQueries := func() ([]time.Duration, error) {
			var lat []time.Duration
			for it := 0; it < max(iterations, 5); it++ {
				for _, q := range queries {
					t := time.Now()
					if _, err := m.EmbedQuery(ctx, q.Query); err != nil {
						return nil, err
					}
					lat = append(lat, time.Since(t))
				}
				time.Sleep(20 * time.Millisecond) // let a background batch get going
			}
			slices.Sort(lat)
			return lat, nil
		}
		lat, err := embedQueries()
		if err != nil {
			return err
		}
		fmt.Printf("query embedding with %s on %s: p50 %s, p95 %s, max %s (add to the semantic, hybrid and pipeline rows)\n",
			m.Name(), m.Backend(), ms(pct(lat, 0.5)), ms(pct(lat, 0.95)), ms(lat[len(lat)-1]))
		// The same while the background job embeds conversations of
		// about 400 tokens, 16 at a time, as searchd's job does.
		var passages []string
		for _, q := range queries {
			passages = append(passages, strings.Repeat(q.Query+" / ", 60), strings.Repeat(q.Query+" / ", 30))
		}
		passages = append(passages, passages...)
		bg, stop := embed.Background(ctx), make(chan struct{})
		var embedded atomic.Int64
		done := make(chan error, 1)
		go func() {
			for {
				select {
				case <-stop:
					done <- nil
					return
				default:
				}
				if _, err := m.EmbedPassages(bg, passages); err != nil {
					done <- err
					return
				}
				embedded.Add(int64(len(passages)))
			}
		}()
		time.Sleep(200 * time.Millisecond)
		start := time.Now()
		lat, err = embedQueries()
		took := time.Since(start)
		close(stop)
		if err := <-done; err != nil {
			return err
		}
		if err != nil {
			return err
		}
		fmt.Printf("query embedding while the job embeds (%.0f passages/s): p50 %s, p95 %s, max %s\n",
			float64(embedded.Load())/took.Seconds(), ms(pct(lat, 0.5)), ms(pct(lat, 0.95)), ms(lat[len(lat)-1]))
		// What searchd holds with the model: it loads the model first, so
		// this (the model's load peak on top of the indexes) bounds it.
		fmt.Printf("peak resident memory with the model loaded: %d MiB\n", peakRSS()>>20)
	}
	return nil
}

// pagesFollowed is how many pages past the first the paging rows follow.
const pagesFollowed = 4

// paging times the pages after the first, each asked with the cursor the
// page before it gave (a later page ranks the query again and skips what
// the cursor says was shown).
func paging(ctx context.Context, svc *search.Service, iterations int) error {
	fmt.Printf("\npages 2–%d of each query, 10 results a page, following the cursor:\n", pagesFollowed+1)
	fmt.Printf("%-9s %9s %9s %9s %9s\n", "mode", "pages", "p50", "p95", "max")
	for _, mode := range []search.Mode{search.Lexical, search.Semantic, search.Hybrid, search.Pipeline} {
		if onlyMode != "" && mode != onlyMode {
			continue
		}
		var lat []time.Duration
		for it := 0; it < iterations; it++ {
			for _, q := range queries {
				q.Mode, q.Limit = mode, 10
				resp, err := svc.Search(ctx, q)
				for page := 0; err == nil && page < pagesFollowed && resp.NextCursor != ""; page++ {
					q.Cursor = resp.NextCursor
					t := time.Now()
					resp, err = svc.Search(ctx, q)
					lat = append(lat, time.Since(t))
				}
				if err != nil {
					return fmt.Errorf("paging %s %q: %w", mode, q.Query, err)
				}
			}
		}
		if len(lat) == 0 {
			fmt.Printf("%-9s %9d\n", mode, 0)
			continue
		}
		slices.Sort(lat)
		fmt.Printf("%-9s %9d %9s %9s %9s\n", mode, len(lat), ms(pct(lat, 0.5)), ms(pct(lat, 0.95)), ms(lat[len(lat)-1]))
	}
	return nil
}

// grownMatrix times the exact scan over a matrix as large as the corpus
// would make it, every segment with a random vector (the timed modes use
// the segments given vectors, 29,000 by default, as at the blog's
// scale), and reports its heap.
func grownMatrix(ctx context.Context, db *sqlite.DB, dim, iterations int) error {
	ids, err := db.SegmentIDs(ctx, 0)
	if err != nil {
		return err
	}
	before := liveHeap()
	m := index.NewMatrix(dim)
	r := rand.New(rand.NewPCG(3, 4))
	for _, id := range ids {
		m.Upsert(id, unit(r, dim))
	}
	heap := liveHeap() - before
	third := func(id int64) bool { return id%3 == 0 }
	var lat []time.Duration
	for it := 0; it < iterations; it++ {
		for _, q := range queries {
			v, _ := randomEmbedder{dim}.EmbedQuery(ctx, q.Query)
			for _, allow := range []func(int64) bool{nil, third} {
				t := time.Now()
				m.TopK(v, 40, allow)
				lat = append(lat, time.Since(t))
			}
		}
	}
	slices.Sort(lat)
	fmt.Printf("\nmatrix grown to every segment: %d × %d, %d MiB of heap; exact top 40, no filter and a third admitted: p50 %s, p95 %s, max %s\n",
		len(ids), dim, heap>>20, ms(pct(lat, 0.5)), ms(pct(lat, 0.95)), ms(lat[len(lat)-1]))
	runtime.KeepAlive(m)
	return nil
}

// keywordIndexAlone times the keyword index's top-k ranking by itself
// (the lexical row adds the filters' set-up, the segment look-ups and the
// page's decoration), each query with no filter and with a channel
// filter, as searches ask for their window of candidates.
func keywordIndexAlone(ctx context.Context, db *sqlite.DB, kw *index.Keywords, window, iterations int) error {
	idx, err := kw.Current(ctx)
	if err != nil || idx == nil {
		return err
	}
	channels, err := db.Channels(ctx)
	if err != nil {
		return err
	}
	var third lexical.Filter // the channels whose ID is a multiple of 3
	for _, c := range channels {
		if c.ID%3 == 0 {
			third.Channels = append(third.Channels, c.ID)
		}
	}
	var lat []time.Duration
	var postings int
	cpu := selfCPU()
	for it := 0; it < iterations; it++ {
		for _, r := range queries {
			q := lexical.Query{Terms: lexical.Terms(r.Query), Limit: window}
			for _, k := range r.Keywords {
				q.Required = append(q.Required, lexical.Terms(k))
			}
			for _, f := range []lexical.Filter{{}, third} {
				q.Filter = f
				t := time.Now()
				idx.Search(q)
				lat = append(lat, time.Since(t))
				if verbose {
					fmt.Printf("  index     %8s  %q %q filtered %v\n", ms(lat[len(lat)-1]), r.Query, r.Keywords, f.Channels != nil)
				}
			}
			if it == 0 {
				postings += idx.Postings(q)
			}
		}
	}
	perQuery := (selfCPU() - cpu) / time.Duration(len(lat))
	slices.Sort(lat)
	fmt.Printf("keyword index alone, top %d of %d postings per query on average: p50 %s, p95 %s, max %s, CPU %s per query\n",
		window, postings/len(queries), ms(pct(lat, 0.5)), ms(pct(lat, 0.95)), ms(lat[len(lat)-1]), ms(perQuery))
	return nil
}

// fill gives random unit vectors to a random sample of segments and to
// their messages, as if an embedding job had run.
func fill(ctx context.Context, path string, db *sqlite.DB, name string, segments, dim int) error {
	if err := db.ResetVectors(ctx, name, dim, ""); err != nil {
		return err
	}
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=synchronous(OFF)")
	if err != nil {
		return err
	}
	defer raw.Close()
	r := rand.New(rand.NewPCG(1, 2))
	tx, err := raw.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO segment_vectors (segment_id, revision, vector)
		SELECT id, revision, NULL FROM segments`); err != nil {
		return err
	}
	rows, err := tx.QueryContext(ctx, `SELECT id FROM segments ORDER BY id`)
	if err != nil {
		return err
	}
	var ids []int64
	for rows.Next() {
		var id int64
		rows.Scan(&id)
		ids = append(ids, id)
	}
	rows.Close()
	r.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	ids = ids[:min(segments, len(ids))]
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, `UPDATE segment_vectors SET vector = ? WHERE segment_id = ?`,
			sqlite.EncodeVector(unit(r, dim)), id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO message_vectors (message_id, vector)
			SELECT message_id, ? FROM message_segments WHERE segment_id = ?`, sqlite.EncodeVector(unit(r, dim)), id); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func unit(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	var n float64
	for i := range v {
		v[i] = float32(r.NormFloat64())
		n += float64(v[i]) * float64(v[i])
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(n))
	}
	return v
}

// randomEmbedder gives each text a fixed random unit vector.
type randomEmbedder struct{ dim int }

func (e randomEmbedder) Dim() int { return e.dim }
func (e randomEmbedder) EmbedQuery(_ context.Context, q string) ([]float32, error) {
	h := fnv.New64a()
	h.Write([]byte(q))
	return unit(rand.New(rand.NewPCG(h.Sum64(), 0)), e.dim), nil
}
func (e randomEmbedder) EmbedPassages(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i], _ = e.EmbedQuery(ctx, t)
	}
	return out, nil
}

func pct(sorted []time.Duration, q float64) time.Duration {
	return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

func peakRSS() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) << 10
}

// selfCPU is the CPU this process has used, user and system: on a busy
// machine, what a request costs when latency mostly measures waiting.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// liveHeap is the heap in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
