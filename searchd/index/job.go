package index

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"
	"unicode/utf8"

	"dsearch/searchd/segment"
	"dsearch/searchd/sqlite"
)

// Embedder turns passages into unit vectors. embed.Model implements it;
// tests use a fake.
type Embedder interface {
	Name() string
	Dim() int
	EmbedPassages(ctx context.Context, texts []string) ([][]float32, error)
}

// A TokenCounter is an Embedder that can say how long texts are in its
// tokens and how many one passage holds; with one, a segment longer than
// that is embedded whole, as several windows (segment.Windows).
type TokenCounter interface {
	PassageTokens(texts []string) (counts []int, limit int, err error)
}

// MinMessageChars: shorter messages (after cleaning) get no vector. The
// rescoring weight min(1, chars/12) makes them count for little anyway.
const MinMessageChars = 4

// Job embeds every segment that needs it (new, changed, or never embedded
// by this model), then every message, for rescoring. Each batch commits on
// its own, so a killed job loses at most one batch and a restart redoes
// nothing finished.
type Job struct {
	DB       *sqlite.DB
	Embedder Embedder
	// MessageEmbedder, if set, embeds the messages in place of Embedder:
	// the same model with cheaper weights (embed.Model.MessageModel), as
	// only rescoring reads message vectors. Its name and dimension must
	// be Embedder's: the database keeps one model's vectors.
	MessageEmbedder Embedder
	// Matrix, if set, follows the vectors the job writes.
	Matrix *Matrix
	Log    *slog.Logger
	// SegmentBatch and MessageBatch are how many segments and messages
	// the job reads, embeds and commits at a time. The model sorts each
	// hand-over by length into its batches, padded to their longest
	// text: a large hand-over holds texts of nearly equal length (16
	// segments and 64 messages at a time padded 37 % and 30 % of the
	// tokens of the benchmark's chat; 128 and 1,024, 9 % and 3 %).
	SegmentBatch int // default 128
	MessageBatch int // default 1024
	// SegmentsOnly leaves messages without vectors (an evaluation that
	// ranks by conversations alone, on a machine too slow for more).
	SegmentsOnly bool
	// Progress, if set, is called after each batch.
	Progress func(Status)
	// Lease, if set, names this process ("searchd serve (pid 123)"): a
	// pass runs only while it holds the database's embedding lease, so
	// two processes never embed the same database at once.
	Lease string
	// LogEvery is how often a long pass logs its progress at info
	// (default 30 s); LogFrom the work a pass needs to be logged at all
	// (default 500 segments and messages), so live messages stay quiet.
	LogEvery time.Duration
	LogFrom  int64

	// leaseTTL, if set, replaces the lease's TTL (tests).
	leaseTTL time.Duration

	kick   chan struct{}
	once   sync.Once
	mu     sync.Mutex
	status Status
	pass   pass
}

// Status is what the job has done since it started.
type Status struct {
	Phase                   string // pooling, messages, segments, idle, waiting (another process embeds)
	SegmentsDone            int64  // embedded (or found too short) by this job
	SegmentsPooled          int64  // given a provisional vector by this job
	MessagesDone            int64
	InferenceTime, BusyTime time.Duration
	// SegmentsPerSec is over the passes over texts, MsgsPerS over the
	// others (pooling embeds the messages).
	SegmentsPerSec, MsgsPerS float64
	// SegmentsLeft and MessagesLeft are what the current pass has still
	// to embed (0 when idle); ETA estimates how long that takes at the
	// rates so far (the messages only once their phase has begun).
	SegmentsLeft, MessagesLeft int64
	ETA                        time.Duration
	Elsewhere                  string // the process embedding this database instead, while waiting
	LastError                  string

	textBusy time.Duration // of BusyTime, in the passes over texts
}

// Status returns a snapshot of the job's progress.
func (j *Job) Status() Status {
	j.mu.Lock()
	defer j.mu.Unlock()
	s := j.status
	if secs := s.textBusy.Seconds(); secs > 0 {
		s.SegmentsPerSec = float64(s.SegmentsDone) / secs
	}
	other := (s.BusyTime - s.textBusy).Seconds()
	if other > 0 {
		s.MsgsPerS = float64(s.MessagesDone) / other
	}
	rate := s.SegmentsPerSec
	if rate == 0 && other > 0 {
		// Until the pass over texts has a rate of its own: it reads
		// about the tokens the pooling pass embedded, at its rate.
		rate = float64(s.SegmentsPooled) / other
	}
	if rate > 0 {
		s.ETA += time.Duration(float64(s.SegmentsLeft) / rate * float64(time.Second))
	}
	if s.MsgsPerS > 0 {
		s.ETA += time.Duration(float64(s.MessagesLeft) / s.MsgsPerS * float64(time.Second))
	}
	return s
}

// BusyError is a pass not run because another process holds the
// embedding lease.
type BusyError struct{ Holder string }

func (e *BusyError) Error() string {
	return e.Holder + " is embedding this database"
}

// leaseTTL is how long a lease outlives its last renewal (after every
// batch, and every fifth of it while a batch runs): a crashed holder
// blocks the others at most this long.
const leaseTTL = 5 * time.Minute

func (j *Job) ttl() time.Duration {
	if j.leaseTTL > 0 {
		return j.leaseTTL
	}
	return leaseTTL
}

func (j *Job) update(fn func(*Status)) {
	j.mu.Lock()
	fn(&j.status)
	j.mu.Unlock()
	if j.Progress != nil {
		j.Progress(j.Status())
	}
}

// Kick asks a running job to look for work now (new messages arrived).
func (j *Job) Kick() {
	j.init()
	select {
	case j.kick <- struct{}{}:
	default:
	}
}

func (j *Job) init() {
	j.once.Do(func() { j.kick = make(chan struct{}, 1) })
}

// Run works until ctx is done: a pass over everything pending, then a
// wait for a kick or for the idle interval. An idle tick looks for work
// only if the data changed (the index version moved: an import in another
// process, say), so a quiet daemon does not rescan 650,000 messages every
// few seconds. Errors are logged and retried after a pause.
func (j *Job) Run(ctx context.Context, idle time.Duration) error {
	j.init()
	var seen int64 = -1
	waiting := false
	for {
		version, verr := j.DB.IndexVersion(ctx)
		var err error
		if verr != nil || version != seen {
			err = j.RunOnce(ctx)
			if err == nil && verr == nil {
				// Remember where this pass left it (imports may have
				// run meanwhile).
				seen, _ = j.DB.IndexVersion(ctx)
			}
		}
		if ctx.Err() != nil {
			return nil
		}
		wait := idle
		var busy *BusyError
		switch {
		case errors.As(err, &busy):
			// `searchd embed` has it: look again at the next tick, then
			// load what it wrote (syncMatrix).
			if !waiting {
				j.Log.Info("embedding waits: another process is embedding this database", "holder", busy.Holder)
			}
			waiting, seen = true, -1
		case err != nil:
			waiting = false
			j.Log.Error("embedding failed; retrying", "err", err, "in", 30*time.Second)
			wait = 30 * time.Second
		default:
			waiting = false
		}
		select {
		case <-ctx.Done():
			return nil
		case <-j.kick:
			seen = -1 // new messages: look now
		case <-time.After(wait):
		}
	}
}

// RunOnce embeds everything pending, segments first, and returns. With a
// Lease it first takes the embedding lease, and returns a *BusyError if
// another process holds it.
func (j *Job) RunOnce(ctx context.Context) error {
	if j.Lease != "" {
		if err := j.renew(ctx); err != nil {
			return err
		}
		defer j.DB.ReleaseLease(context.WithoutCancel(ctx), sqlite.LeaseEmbedding, j.Lease)
		// A batch of 128 segments can outlast the lease (the pure-Go
		// backend, a busy machine): keep it while the pass runs.
		var lost context.CancelCauseFunc
		ctx, lost = context.WithCancelCause(ctx)
		kept := make(chan struct{})
		go func() { defer close(kept); j.keepLease(ctx, lost) }()
		defer func() { lost(nil); <-kept }()
	}
	j.pass = pass{start: time.Now()}
	// Three passes: the segments without a vector get the mean of their
	// messages' vectors first, so that search by meaning covers a new
	// history in the time its messages take (about 40 % of the whole);
	// then the messages no segment's text holds; then every segment's
	// text replaces its provisional vector.
	err := j.checkMessageEmbedder()
	if err == nil && !j.SegmentsOnly {
		err = j.segments(ctx, true)
	}
	if err == nil && !j.SegmentsOnly {
		err = j.messages(ctx)
	}
	if err == nil {
		err = j.segments(ctx, false)
	}
	if err == nil && j.Matrix != nil {
		err = j.syncMatrix(ctx)
	}
	var busy *BusyError
	if cause := context.Cause(ctx); err != nil && errors.As(cause, &busy) {
		err = busy // the lease was lost mid-batch: say to whom
	}
	j.passDone(err)
	j.update(func(s *Status) {
		s.Phase = "idle"
		s.SegmentsLeft, s.MessagesLeft, s.ETA = 0, 0, 0
		switch {
		case err == nil:
			s.LastError = "" // a pass that ends well: the error is past
		case !errors.Is(err, context.Canceled):
			s.LastError = err.Error()
		}
	})
	return err
}

// checkMessageEmbedder refuses a message embedder of another model.
func (j *Job) checkMessageEmbedder() error {
	me := j.MessageEmbedder
	if me == nil || (me.Name() == j.Embedder.Name() && me.Dim() == j.Embedder.Dim()) {
		return nil
	}
	return fmt.Errorf("message embedder %s (%d dimensions) is not the model's, %s (%d dimensions)", me.Name(), me.Dim(), j.Embedder.Name(), j.Embedder.Dim())
}

// renew takes or renews the embedding lease.
func (j *Job) renew(ctx context.Context) error {
	if j.Lease == "" {
		return nil
	}
	err := j.takeLease(ctx)
	var busy *BusyError
	switch {
	case errors.As(err, &busy):
		j.update(func(s *Status) { s.Phase, s.Elsewhere = "waiting", busy.Holder })
	case err == nil:
		j.update(func(s *Status) { s.Elsewhere = "" })
	}
	return err
}

// takeLease takes or renews the embedding lease; a BusyError names the
// process that holds it instead.
func (j *Job) takeLease(ctx context.Context) error {
	held, err := j.DB.AcquireLease(ctx, sqlite.LeaseEmbedding, j.Lease, j.ttl())
	if err == nil && held != nil {
		err = &BusyError{Holder: held.Owner}
	}
	return err
}

// keepLease renews the lease every fifth of its TTL until ctx is done,
// and cancels the pass (lost) if it cannot: another process took it
// after all, or the database failed. It leaves the status alone: the
// job's goroutine reports.
func (j *Job) keepLease(ctx context.Context, lost context.CancelCauseFunc) {
	tick := time.NewTicker(j.ttl() / 5)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if err := j.takeLease(ctx); err != nil && ctx.Err() == nil {
			lost(err)
			return
		}
	}
}

// pass is the progress of one RunOnce, for its log lines.
type pass struct {
	start, logged  time.Time
	counted, loud  bool
	segsAt, msgsAt int64 // the job's totals when the pass started
	pooledAt       int64
	segsOf, msgsOf int64 // what the pass found to do
}

// begin counts a pass's work, once, when it finds some, and logs its
// start at info if it is large.
func (j *Job) begin(ctx context.Context) error {
	p := &j.pass
	if p.counted {
		return nil
	}
	p.counted = true
	c, err := j.DB.EmbeddingCounts(ctx)
	if err != nil {
		return err
	}
	st := j.Status()
	p.segsAt, p.msgsAt, p.pooledAt = st.SegmentsDone, st.MessagesDone, st.SegmentsPooled
	p.segsOf, p.msgsOf = c.Segments-c.SegmentsDone, c.Messages-c.MessagesDone
	from := j.LogFrom
	if from == 0 {
		from = 500
	}
	if p.loud = p.segsOf+p.msgsOf >= from; p.loud {
		p.logged = time.Now()
		j.Log.Info("embedding started", "segments", p.segsOf, "messages", p.msgsOf)
	}
	return nil
}

// left updates what the pass has still to do, after a batch.
func (p *pass) left(s *Status) {
	s.SegmentsLeft = max(0, p.segsOf-(s.SegmentsDone-p.segsAt))
	s.MessagesLeft = max(0, p.msgsOf-(s.MessagesDone-p.msgsAt))
}

// progress logs a large pass's progress at info every LogEvery: counts,
// rates and times only, never text.
func (j *Job) progress(phase string) {
	p := &j.pass
	every := j.LogEvery
	if every == 0 {
		every = 30 * time.Second
	}
	if !p.loud || time.Since(p.logged) < every {
		return
	}
	p.logged = time.Now()
	st := j.Status()
	j.Log.Info("embedding", "phase", phase,
		"segments_pooled", st.SegmentsPooled-p.pooledAt, "segments_done", st.SegmentsDone-p.segsAt, "segments_left", st.SegmentsLeft,
		"messages_done", st.MessagesDone-p.msgsAt, "messages_left", st.MessagesLeft,
		"segments_per_s", round1(st.SegmentsPerSec), "messages_per_s", round1(st.MsgsPerS), "eta", st.ETA.Round(time.Second))
}

// passDone logs the end of a pass that logged its start.
func (j *Job) passDone(err error) {
	p := &j.pass
	if !p.loud {
		return
	}
	st := j.Status()
	args := []any{"segments", st.SegmentsDone - p.segsAt, "messages", st.MessagesDone - p.msgsAt, "took", time.Since(p.start).Round(time.Second)}
	if err != nil {
		j.Log.Info("embedding stopped", append(args, "err", err)...)
		return
	}
	j.Log.Info("embedding done", args...)
}

func round1(x float64) float64 { return float64(int64(x*10+0.5)) / 10 }

// segments embeds the pending segments' texts: in the first pass (pooled)
// only those without a current vector, each given the mean of its
// messages' vectors (pool), and in the second every segment whose vector
// is missing, stale, provisional or without its windows, from its text.
func (j *Job) segments(ctx context.Context, pooled bool) error {
	batch := j.SegmentBatch
	if batch <= 0 {
		batch = 128
	}
	phase := "segments"
	if pooled {
		phase = "pooling"
	}
	var after int64
	for {
		start := time.Now()
		pending, err := j.DB.PendingSegments(ctx, after, batch, segment.MaxTextMessages, pooled)
		if err != nil || len(pending) == 0 {
			return err
		}
		if err := j.begin(ctx); err != nil {
			return err
		}
		after = pending[len(pending)-1].ID
		vs, passages, err := j.passages(pending)
		if err != nil {
			return err
		}
		var infer time.Duration
		var messages int
		if pooled {
			vs, infer, messages, err = j.pool(ctx, vs, passages)
		} else {
			texts := make([]string, len(passages))
			for k, p := range passages {
				texts[k] = p.text
			}
			infer, err = embedWith(ctx, j.Embedder, texts, func(k int, v []float32) { passages[k].set(v) })
		}
		if err != nil {
			return err
		}
		saved, err := j.DB.SaveSegmentVectors(ctx, vs)
		if err != nil {
			return err
		}
		if j.Matrix != nil {
			for _, v := range saved {
				var ws []Window
				for _, w := range v.Windows {
					ws = append(ws, Window{w.First, w.Vector})
				}
				switch {
				case v.WindowsOnly:
					j.Matrix.ReplaceWindows(v.ID, ws)
				case v.Vector == nil:
					j.Matrix.Delete(v.ID)
				default:
					j.Matrix.UpsertWindows(v.ID, append([]Window{{0, v.Vector}}, ws...))
				}
			}
		}
		j.update(func(s *Status) {
			s.Phase = phase
			if pooled {
				s.SegmentsPooled += int64(len(saved))
			} else {
				s.SegmentsDone += int64(len(saved))
			}
			s.MessagesDone += int64(messages)
			s.InferenceTime += infer
			s.BusyTime += time.Since(start)
			if !pooled {
				s.textBusy += time.Since(start)
			}
			j.pass.left(s)
		})
		j.progress(phase)
		if err := j.renew(ctx); err != nil {
			return err
		}
	}
}

// A passage is a text the segment passes embed: a segment's text (its
// first window) or a further window, made of its messages.
type passage struct {
	seg    int // the segment's index in its batch
	window int // 0: the segment's text, else a further window
	text   string
	parts  []string // the cleaned messages text joins
	ids    []int64  // their IDs
	raw    []string // and contents, as stored
	tokens []int    // and lengths in tokens (nil: the embedder cannot count)
	limit  int      // the tokens one passage holds
	set    func([]float32)
}

// passages are the pending segments' vectors to fill and the passages
// that fill them: each segment's text (unless only its windows are
// wanted) and its further windows. A segment too short to embed gets no
// passage and keeps a nil vector.
func (j *Job) passages(pending []sqlite.PendingSegment) ([]sqlite.SegmentVector, []passage, error) {
	windows, tokens, limit, err := j.windows(pending)
	if err != nil {
		return nil, nil, err
	}
	vs := make([]sqlite.SegmentVector, len(pending))
	var out []passage
	add := func(p sqlite.PendingSegment, i, window, from, to int, set func([]float32)) bool {
		parts, at := segment.Parts(p.Contents[from:to])
		ps := passage{seg: i, window: window, text: segment.TextOf(parts), parts: parts, limit: limit, set: set}
		if ps.text == "" {
			return false
		}
		for _, k := range at {
			ps.ids = append(ps.ids, p.MessageIDs[from+k])
			ps.raw = append(ps.raw, p.Contents[from+k])
			if tokens[i] != nil {
				ps.tokens = append(ps.tokens, tokens[i][from+k])
			}
		}
		out = append(out, ps)
		return true
	}
	for i, p := range pending {
		vs[i] = sqlite.SegmentVector{ID: p.ID, Revision: p.Revision, WindowsOnly: p.WindowsOnly}
		if !p.WindowsOnly && !add(p, i, 0, 0, len(p.Contents), func(v []float32) { vs[i].Vector = v }) {
			continue // too short: no windows either
		}
		vs[i].Windows = make([]sqlite.Window, len(windows[i]))
		for k, w := range windows[i] {
			vs[i].Windows[k].First = w.First
			add(p, i, k+1, w.First, w.To, func(v []float32) { vs[i].Windows[k].Vector = v })
		}
	}
	return vs, out, nil
}

// windows are each pending segment's windows after the first and its
// messages' lengths in tokens, with what one passage holds, when the
// embedder can count tokens.
func (j *Job) windows(pending []sqlite.PendingSegment) ([][]segment.Window, [][]int, int, error) {
	tc, ok := j.Embedder.(TokenCounter)
	if !ok {
		return make([][]segment.Window, len(pending)), make([][]int, len(pending)), 0, nil
	}
	var cleaned []string
	for _, p := range pending {
		for _, c := range p.Contents {
			cleaned = append(cleaned, segment.Clean(c))
		}
	}
	counts, limit, err := tc.PassageTokens(cleaned)
	if err != nil {
		return nil, nil, 0, err
	}
	out := make([][]segment.Window, len(pending))
	tokens := make([][]int, len(pending))
	for i, p := range pending {
		tokens[i] = counts[:len(p.Contents)]
		out[i] = segment.Windows(p.Contents, tokens[i], limit)
		counts = counts[len(p.Contents):]
	}
	return out, tokens, limit, nil
}

func (j *Job) messages(ctx context.Context) error {
	batch := j.MessageBatch
	if batch <= 0 {
		batch = 1024
	}
	emb := j.Embedder
	if j.MessageEmbedder != nil {
		emb = j.MessageEmbedder
	}
	// Message IDs can be negative (archives older than Discord): start
	// below every one.
	from := int64(math.MinInt64)
	for {
		start := time.Now()
		pending, err := j.DB.PendingMessages(ctx, from, batch)
		if err != nil || len(pending) == 0 {
			return err
		}
		if err := j.begin(ctx); err != nil {
			return err
		}
		last := pending[len(pending)-1].ID
		from = last + 1
		vs := make([]sqlite.MessageVector, len(pending))
		var texts []string
		var idx []int
		for i, p := range pending {
			vs[i] = sqlite.MessageVector{ID: p.ID, Content: p.Content}
			if t := segment.Clean(p.Content); utf8.RuneCountInString(t) >= MinMessageChars {
				texts = append(texts, t)
				idx = append(idx, i)
			}
		}
		infer, err := embedWith(ctx, emb, texts, func(k int, v []float32) { vs[idx[k]].Vector = v })
		if err != nil {
			return err
		}
		n, err := j.DB.SaveMessageVectors(ctx, vs)
		if err != nil {
			return err
		}
		j.update(func(s *Status) {
			s.Phase = "messages"
			s.MessagesDone += int64(n)
			s.InferenceTime += infer
			s.BusyTime += time.Since(start)
			j.pass.left(s)
		})
		j.progress("messages")
		if err := j.renew(ctx); err != nil {
			return err
		}
		if last == math.MaxInt64 {
			return nil
		}
	}
}

// embedWith runs the model on texts and hands each vector to set.
func embedWith(ctx context.Context, model Embedder, texts []string, set func(int, []float32)) (time.Duration, error) {
	if len(texts) == 0 {
		return 0, nil
	}
	start := time.Now()
	vecs, err := model.EmbedPassages(ctx, texts)
	if err != nil {
		return 0, err
	}
	for k, v := range vecs {
		set(k, v)
	}
	return time.Since(start), nil
}

// syncMatrix brings the matrix in line with the database after changes
// made by anyone (an import or `searchd embed` in another process, the
// API): it drops segments deleted, or changed and not yet re-embedded, and
// loads vectors it lacks.
func (j *Job) syncMatrix(ctx context.Context) error {
	current, err := j.DB.CurrentSegmentVectorIDs(ctx)
	if err != nil {
		return err
	}
	have := map[int64]bool{}
	for _, id := range j.Matrix.IDs() {
		if !current[id] {
			j.Matrix.Delete(id)
		} else {
			have[id] = true
		}
	}
	var missing []int64
	for id := range current {
		if !have[id] {
			missing = append(missing, id)
		}
	}
	return j.DB.SegmentVectors(ctx, missing, j.Matrix.Dim(), j.Matrix.add)
}
