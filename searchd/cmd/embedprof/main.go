// Command embedprof measures where the embedding job's time goes: it runs
// the real job (index.Job) over a database, segments then messages, and
// reports per phase the passages, their tokens, the tokens the model's
// batches pad them to, and the wall and CPU (user + sys) time of the
// model calls. It writes vectors: give it a copy of a database.
//
//	embedprof -data COPY -model build/model [-side-by-side] [-threads N]
//	    [-segment-batch N] [-message-batch N] [-limit N] [-dry]
//	    [-message-model=false]
//
// docs/benchmarks.md, "A faster first embedding", shows what it measured.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"syscall"
	"time"

	"dsearch/searchd/embed"
	"dsearch/searchd/index"
	"dsearch/searchd/sqlite"
)

// phase is what one phase's model calls did.
type phase struct {
	calls, passages, tokens, padded int
	wall, cpu                       time.Duration
	// lengths counts passages by tokens: under 16, 32, 64, ..., 1,024,
	// and more.
	lengths [8]int
}

// recorder is the job's Embedder: it counts and times each call to the
// model.
type recorder struct {
	m            *embed.Model
	messages     *embed.Model // the message weights, if used
	sideBySide   bool
	dry          bool
	limit        int
	phase        string
	phases       map[string]*phase
	segmentsCall bool // the job counted tokens: a segments call follows
}

var errLimit = errors.New("limit reached")

func (r *recorder) Name() string { return r.m.Name() }
func (r *recorder) Dim() int     { return r.m.Dim() }

// PassageTokens is called by the job before each segment batch only.
func (r *recorder) PassageTokens(texts []string) ([]int, int, error) {
	r.segmentsCall = true
	return r.m.PassageTokens(texts)
}

func (r *recorder) EmbedPassages(ctx context.Context, texts []string) ([][]float32, error) {
	segmentsCall := r.segmentsCall
	r.segmentsCall = false
	if r.phase == "messages" && segmentsCall {
		// Segments the first phase's -limit left: not measured.
		return r.placeholders(len(texts)), nil
	}
	ph := r.phases[r.phase]
	if r.limit > 0 && ph.passages >= r.limit {
		return nil, errLimit
	}
	in := make([]string, len(texts))
	for i, t := range texts {
		in[i] = r.m.Config().PassagePrefix + t
	}
	ids, err := r.m.TokenIDs(in)
	if err != nil {
		return nil, err
	}
	lengths := make([]int, len(ids))
	for i, x := range ids {
		lengths[i] = len(x)
		ph.tokens += len(x)
		b := 0
		for n := 16; b < len(ph.lengths)-1 && len(x) >= n; n *= 2 {
			b++
		}
		ph.lengths[b]++
	}
	ph.padded += padded(lengths, r.sideBySide)
	ph.calls++
	ph.passages += len(texts)
	if r.dry {
		return r.placeholders(len(texts)), nil
	}
	model := r.m
	if r.phase == "messages" && r.messages != nil {
		model = r.messages
	}
	wall, cpu0 := time.Now(), cpu()
	v, err := model.EmbedPassages(ctx, texts)
	ph.wall += time.Since(wall)
	ph.cpu += cpu() - cpu0
	return v, err
}

// padded is how many tokens embed.Model's batches of these lengths take,
// each padded to its longest: sorted by length, at most 32 passages and
// 2 × 512² tokens² a batch, half that per batch side by side on 2 cores.
// It mirrors embed.Model.embed.
func padded(lengths []int, sideBySide bool) int {
	slices.Sort(lengths)
	budget := 2 * 512 * 512
	if sideBySide {
		budget /= runtime.GOMAXPROCS(0)
	}
	total := 0
	for start := 0; start < len(lengths); {
		end := start + 1
		for end < len(lengths) && end-start < 32 && (end-start+1)*lengths[end]*lengths[end] <= budget {
			end++
		}
		total += (end - start) * lengths[end-1]
		start = end
	}
	return total
}

func (r *recorder) placeholders(n int) [][]float32 {
	out := make([][]float32, n)
	for i := range out {
		out[i] = make([]float32, r.m.Dim())
		out[i][0] = 1
	}
	return out
}

// cpu is the process's user + sys time: every ONNX Runtime thread's.
func cpu() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func main() {
	data := flag.String("data", "", "database directory: a copy, the vectors are written")
	model := flag.String("model", "build/model", "model directory")
	threads := flag.Int("threads", 0, "ONNX Runtime threads per inference (0: its default, every core)")
	sideBySide := flag.Bool("side-by-side", false, "run the batches side by side, a batch per core (embed.Background), as searchd embed and serve do; use with -threads 1")
	segmentBatch := flag.Int("segment-batch", 0, "segments per hand-over (0: the job's default)")
	messageBatch := flag.Int("message-batch", 0, "messages per hand-over (0: the job's default)")
	limit := flag.Int("limit", 0, "stop each phase after about this many passages (0: embed everything)")
	dry := flag.Bool("dry", false, "count tokens and padding only; do not run the model")
	messageModel := flag.Bool("message-model", true, "embed messages with the model directory's message weights (message_model), as searchd embed does, where it has them")
	flag.Parse()
	if err := run(*data, *model, *threads, *sideBySide, *segmentBatch, *messageBatch, *limit, *dry, *messageModel); err != nil {
		fmt.Fprintln(os.Stderr, "embedprof:", err)
		os.Exit(1)
	}
}

func run(data, model string, threads int, sideBySide bool, segmentBatch, messageBatch, limit int, dry, messageModel bool) error {
	ctx := context.Background()
	m, err := embed.Load(model, embed.Options{Backend: embed.ORT, ORTLibrary: os.Getenv("DSEARCH_ORT_LIBRARY"), Threads: threads})
	if err != nil {
		return err
	}
	defer m.Close()
	r := &recorder{m: m, sideBySide: sideBySide, dry: dry, limit: limit, phases: map[string]*phase{}}
	if messageModel && m.Config().MessageModel != "" {
		if r.messages, err = m.MessageModel(); err != nil {
			return err
		}
		defer r.messages.Close() // before m: it shares m's session
		fmt.Printf("messages with the %s weights\n", m.Config().MessageModel)
	}
	db, err := sqlite.Open(ctx, data)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.CheckModel(ctx, m.Name(), m.Dim(), m.Weights()); err != nil {
		return err
	}
	job := &index.Job{DB: db, Embedder: r, Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		SegmentBatch: segmentBatch, MessageBatch: messageBatch}
	if sideBySide {
		ctx = embed.Background(ctx)
	}
	wall, cpu0 := time.Now(), cpu()
	for _, name := range []string{"segments", "messages"} {
		r.phase, job.SegmentsOnly = name, name == "segments"
		r.phases[name] = &phase{}
		if err := job.RunOnce(ctx); err != nil && !errors.Is(err, errLimit) {
			return err
		}
		p := r.phases[name]
		fmt.Printf("%s: %d calls, %d passages, %d tokens, padded to %d (%.1f %% padding); model calls %.1f s wall, %.1f s CPU: %.0f tokens per CPU second; passages by tokens (<16, <32, ..., <1024, more) %v\n",
			name, p.calls, p.passages, p.tokens, p.padded, 100*float64(p.padded-p.tokens)/float64(max(1, p.padded)),
			p.wall.Seconds(), p.cpu.Seconds(), float64(p.tokens)/p.cpu.Seconds(), p.lengths)
	}
	fmt.Printf("total %.1f s wall, %.1f s CPU (threads %d, side by side %v)\n", time.Since(wall).Seconds(), (cpu() - cpu0).Seconds(), threads, sideBySide)
	return nil
}
