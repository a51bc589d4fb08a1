package main

import (
	"bufio"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/peterbourgon/ff/v3/ffcli"

	"dsearch/searchd/answer"
	"dsearch/searchd/embed"
	"dsearch/searchd/index"
	"dsearch/searchd/llm"
	"dsearch/searchd/search"
	"dsearch/searchd/sqlite"
)

func (m *Main) evalCmd() *ffcli.Command {
	var cfg Config
	var export, queries, mode, dump, llmCache, keep string
	var summaries int
	retrieval := command("retrieval", "--export DIR --queries FILE [flags]",
		"import an export into a scratch database, embed it, run labelled queries and print recall@k and MRR", &cfg,
		func(fs *flag.FlagSet) {
			fs.StringVar(&export, "export", "", "DiscordChatExporter export file or directory")
			fs.StringVar(&queries, "queries", "", `JSON lines: {"id", "query", "channel_id", "relevant": [message ids], "category"}`)
			fs.StringVar(&mode, "mode", "", "one mode (pipeline, semantic, lexical, hybrid, or query: the whole question pipeline); default: all")
			fs.StringVar(&dump, "dump", "", `write {"id", "mode", "ranked": [message ids]} lines here; in hybrid mode also "relevant", "kind" and "candidates" (each retriever's scored messages: scripts/fusion-replay.py)`)
			fs.IntVar(&summaries, "summaries", 0, "mode query: also summarize the first N questions, to time the LLM's summaries")
			fs.StringVar(&llmCache, "llm-cache", "", "mode query: answer the LLM's temperature-0 calls (plans) from this JSON lines file where it has them, and add the others: "+
				"a run repeated with other fusion settings gets the same plans without waiting for the model (the file holds the questions and plans)")
			fs.StringVar(&keep, "keep", "", "keep the scratch database in this directory, and use it as it is when it is there: a second run over the same export with the same model embeds nothing")
		},
		func(ctx context.Context, _ []string) error {
			if export == "" || queries == "" {
				return errors.New("eval retrieval: --export and --queries are required")
			}
			return m.evalRetrieval(ctx, &cfg, export, queries, mode, dump, llmCache, keep, summaries)
		})
	var scfg Config
	var sexport, gold, sdump, sorder string
	segments := command("segments", "--export DIR --gold FILE [flags]",
		"import an export into a scratch database and score its segments against gold conversations", &scfg,
		func(fs *flag.FlagSet) {
			fs.StringVar(&sexport, "export", "", "DiscordChatExporter export file or directory")
			fs.StringVar(&gold, "gold", "", `JSON lines: {"channel_id", "messages": [message ids]}, one gold conversation each`)
			fs.StringVar(&sdump, "dump", "", `write {"segment_id", "messages": [ids]} lines here`)
			fs.StringVar(&sorder, "order", "import", "the order messages arrive in: import (each file in order), backfill (the bot's: pages of 100 going back in time), shuffle")
		},
		func(ctx context.Context, _ []string) error {
			if sexport == "" || gold == "" {
				return errors.New("eval segments: --export and --gold are required")
			}
			return m.evalSegments(ctx, &scfg, sexport, gold, sdump, sorder)
		})
	var fcfg Config
	floor := command("floor", "SET_DIR SET_DIR... [flags]",
		"where a model puts answers and non-answers, to choose its --min-similarity (each SET_DIR: exports and queries.jsonl)", &fcfg, nil,
		func(ctx context.Context, sets []string) error { return m.evalFloor(ctx, &fcfg, sets) })
	var acfg Config
	var adump, akeep string
	var asegs bool
	var aevery int
	abstain := command("abstain", "SET_DIR SET_DIR... [flags]",
		"whether search says so when nothing matches: each set's questions in their own channel, in another of the set's channels without names, and in the next set's (each SET_DIR: exports and queries.jsonl)", &acfg,
		func(fs *flag.FlagSet) {
			fs.StringVar(&adump, "dump", "", `write {"set", "kind", "via", "id", "refused", "recall10", "top": [{"high", "standout", "support", "closeness", and the evidence: "z", "n", "message_z", "m", "rare_support", "lead", "cosine", "message_cosine", "words", "found", "mean", "std", "self", "semantic_rank", "lexical_rank", "terms", "together", "near_support"}]} lines here (scripts/abstain-replay.py)`)
			fs.IntVar(&aevery, "every", 1, "ask every Nth question of each set (1: all; 3: the first, fourth, ...)")
			fs.BoolVar(&asegs, "segments-only", false, "embed conversations only, not messages, and rank messages without vectors (quicker; recall is then not eval retrieval's)")
			fs.StringVar(&akeep, "keep", "", "keep the scratch database in this directory, and use it as it is when it is there: a second run with the same sets and model embeds nothing")
		},
		func(ctx context.Context, sets []string) error {
			return m.evalAbstain(ctx, &acfg, sets, adump, akeep, asegs, aevery)
		})
	return &ffcli.Command{Name: "eval", ShortUsage: "searchd eval retrieval|segments|floor|abstain [flags]", ShortHelp: "measure search and segmentation quality on labelled data",
		Subcommands: []*ffcli.Command{retrieval, segments, floor, abstain}, FlagSet: flag.NewFlagSet("searchd eval", flag.ContinueOnError),
		Exec: func(context.Context, []string) error { return flag.ErrHelp }}
}

type evalQuery struct {
	ID        string   `json:"id"`
	Query     string   `json:"query"`
	ChannelID string   `json:"channel_id"`
	Relevant  []string `json:"relevant"`
	Category  any      `json:"category"`
}

// evalKs are the cut-offs recall is reported at.
var evalKs = []int{1, 5, 10, 25, 50}

func (m *Main) evalRetrieval(ctx context.Context, cfg *Config, export, queryFile, only, dump, llmCache, keep string, summaries int) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	qs, err := readQueries(queryFile)
	if err != nil {
		return err
	}
	modes := []search.Mode{search.Lexical, search.Semantic, search.Hybrid, search.Pipeline, queryMode}
	if only != "" {
		md := queryMode
		if only != string(queryMode) {
			var err error
			if md, err = search.ParseMode(only); err != nil {
				return err
			}
		}
		modes = []search.Mode{md}
	}
	db, done, err := scratchImport(ctx, cfg, []string{export}, keep)
	if err != nil {
		return err
	}
	defer done()
	svc, err := evalService(ctx, cfg, db)
	if err != nil {
		return err
	}
	if slices.ContainsFunc(modes, func(md search.Mode) bool { return md != search.Lexical }) {
		model, err := m.embedForEval(ctx, cfg, db, svc, false)
		if err != nil {
			return err
		}
		defer model.Close()
		svc.Embedder = model
	}
	dumpw, closeDump, err := createDump(dump)
	if err != nil {
		return err
	}
	defer closeDump()
	fmt.Fprintf(m.Stdout, "%d queries over %s\n", len(qs), export)
	if svc.Embedder != nil {
		printReadings(m.Stdout, svc, qs)
	}
	ans, err := cfg.AnswerService(db, svc)
	if err != nil {
		return err
	}
	var times *llmTimes
	if ans.LLM != nil && slices.Contains(modes, queryMode) {
		fmt.Fprintf(m.Stderr, "mode query plans with %s at %s (falls back to rules when it cannot)\n", cfg.OllamaModel, llm.Redact(cfg.OllamaURL))
		times = &llmTimes{inner: ans.LLM}
		ans.LLM = times
		if llmCache != "" {
			c, err := openLLMCache(llmCache, cfg.OllamaModel, times)
			if err != nil {
				return err
			}
			defer c.Close()
			ans.LLM = c
			defer func() {
				fmt.Fprintf(m.Stderr, "llm cache %s: %d calls answered from it, %d added\n", llmCache, c.hits, c.added)
			}()
		}
	}
	for _, md := range modes {
		plans := &planStats{reasons: map[string]int{}}
		scores, err := evalMode(ctx, svc, ans, md, qs, dumpw, plans, summaries)
		if err != nil {
			return fmt.Errorf("mode %s: %w", md, err)
		}
		printScores(m.Stdout, md, scores)
		if md == queryMode {
			plans.print(m.Stdout, times)
		}
	}
	return nil
}

// printReadings prints the distribution of the model's reading of the
// queries (search.Service.Reading): what tells a query the model cannot
// read.
func printReadings(w io.Writer, svc *search.Service, qs []evalQuery) {
	rs := make([]float64, len(qs))
	under := 0
	for i, q := range qs {
		rs[i] = svc.Reading(q.Query)
		if rs[i] < svc.Config.MinReading {
			under++
		}
	}
	if len(rs) == 0 {
		return
	}
	slices.Sort(rs)
	at := func(p float64) float64 { return rs[min(len(rs)-1, int(p*float64(len(rs))))] }
	fmt.Fprintf(w, "reading: min %.2f, p10 %.2f, median %.2f, p90 %.2f, max %.2f; %d of %d under %.2f\n",
		rs[0], at(0.1), at(0.5), at(0.9), rs[len(rs)-1], under, len(rs), svc.Config.MinReading)
}

// llmTimes times an LLM's calls: plans ask for JSON, summaries do not.
type llmTimes struct {
	inner         answer.LLM
	plan, summary []time.Duration
}

func (l *llmTimes) Complete(ctx context.Context, r llm.Request) (string, error) {
	start := time.Now()
	out, err := l.inner.Complete(ctx, r)
	if r.JSON {
		l.plan = append(l.plan, time.Since(start))
	} else {
		l.summary = append(l.summary, time.Since(start))
	}
	return out, err
}

// llmCache answers the LLM calls it has an answer for, keyed by model
// and request, and records the others' answers. Only calls at
// temperature 0 (plans) are kept: they get the same answer every time,
// so a replayed run plans as the model would; errors (a timeout under
// load) are not kept, so such a call asks the model again. Replayed
// calls are not timed.
type llmCache struct {
	inner       answer.LLM
	model       string
	seen        map[string]string
	f           *os.File
	hits, added int
}

type llmCacheLine struct {
	Key string `json:"key"`
	Out string `json:"out"`
}

func openLLMCache(path, model string, inner answer.LLM) (*llmCache, error) {
	c := &llmCache{inner: inner, model: model, seen: map[string]string{}}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for n := 1; sc.Scan(); n++ {
		var l llmCacheLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			f.Close()
			return nil, fmt.Errorf("llm cache %s:%d: %w", path, n, err)
		}
		c.seen[l.Key] = l.Out
	}
	if err := sc.Err(); err != nil {
		f.Close()
		return nil, err
	}
	c.f = f
	return c, nil
}

func (c *llmCache) Complete(ctx context.Context, r llm.Request) (string, error) {
	if r.Temperature != 0 {
		return c.inner.Complete(ctx, r)
	}
	b, _ := json.Marshal(struct {
		Model string
		R     llm.Request
	}{c.model, r})
	sum := sha256.Sum256(b)
	key := hex.EncodeToString(sum[:])
	if out, ok := c.seen[key]; ok {
		c.hits++
		return out, nil
	}
	out, err := c.inner.Complete(ctx, r)
	if err != nil {
		return out, err
	}
	line, _ := json.Marshal(llmCacheLine{Key: key, Out: out})
	if _, err := c.f.Write(append(line, '\n')); err != nil {
		return "", fmt.Errorf("llm cache: %w", err)
	}
	c.seen[key] = out
	c.added++
	return out, nil
}

func (c *llmCache) Close() error { return c.f.Close() }

// planStats counts where mode query's plans came from, and why the
// model's were refused.
type planStats struct {
	llm, rules, answers, summarized int
	reasons                         map[string]int
}

var (
	urlRE    = regexp.MustCompile(`https?://\S+`)
	digitsRE = regexp.MustCompile(`\d+`)
)

func (p *planStats) add(r *answer.Response) {
	if r.PlanSource == "llm" {
		p.llm++
	} else {
		p.rules++
	}
	if r.Answer != "" {
		p.answers++
	}
	// Each try's error is a line: why the model's plan was not taken.
	for _, line := range strings.Split(r.PlanError, "\n") {
		if line != "" {
			line = digitsRE.ReplaceAllString(urlRE.ReplaceAllString(line, "URL"), "N")
			p.reasons[line[:min(len(line), 90)]]++
		}
	}
}

func (p *planStats) print(w io.Writer, t *llmTimes) {
	n := p.llm + p.rules
	fmt.Fprintf(w, "plans: %d of %d from the LLM (%.1f%%), %d by rules\n", p.llm, n, 100*float64(p.llm)/float64(max(n, 1)), p.rules)
	reasons := slices.Collect(maps.Keys(p.reasons))
	slices.SortFunc(reasons, func(a, b string) int { return cmp.Or(p.reasons[b]-p.reasons[a], strings.Compare(a, b)) })
	for _, r := range reasons {
		fmt.Fprintf(w, "  %4d× %s\n", p.reasons[r], r)
	}
	if t == nil {
		return
	}
	fmt.Fprintf(w, "LLM calls for plans: %s\n", quantiles(t.plan))
	if p.summarized > 0 {
		fmt.Fprintf(w, "summaries: %d answered of %d asked; LLM calls: %s\n", p.answers, p.summarized, quantiles(t.summary))
	}
}

// quantiles is "n calls, p50 …, p90 …, max …".
func quantiles(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	s := slices.Sorted(slices.Values(ds))
	q := func(f float64) time.Duration {
		return s[min(len(s)-1, int(f*float64(len(s))))].Round(10 * time.Millisecond)
	}
	return fmt.Sprintf("%d calls, p50 %s, p90 %s, max %s", len(s), q(0.5), q(0.9), s[len(s)-1].Round(10*time.Millisecond))
}

func readQueries(path string) ([]evalQuery, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []evalQuery
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for n := 1; sc.Scan(); n++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var q evalQuery
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		out = append(out, q)
	}
	return out, sc.Err()
}

// evalScores sums per-query recall@k and reciprocal rank by category.
type evalScores struct {
	n      map[string]int
	recall map[string][]float64
	rr     map[string]float64
	order  []string
}

func (s *evalScores) add(cat string, recall []float64, rr float64) {
	for _, c := range []string{cat, "all"} {
		if _, ok := s.n[c]; !ok {
			s.order = append(s.order, c)
			s.recall[c] = make([]float64, len(evalKs))
		}
		s.n[c]++
		for i, r := range recall {
			s.recall[c][i] += r
		}
		s.rr[c] += rr
	}
}

// everyChannel lists the channels holding messages: an evaluation asks
// each question as the bot asks it for a member who may read them all
// and picked the question's channel (search.Request.Readable: words are
// weighed by how common they are in all of them).
func everyChannel(ctx context.Context, db *sqlite.DB) ([]int64, error) {
	names, err := db.Channels(ctx)
	var ids []int64
	for _, c := range names {
		ids = append(ids, c.ID)
	}
	return ids, err
}

// queryMode evaluates the whole question pipeline (POST /v1/query):
// names to authors, the LLM's plan (or the rules'), fused subqueries.
const queryMode search.Mode = "query"

func evalMode(ctx context.Context, svc *search.Service, ans *answer.Service, md search.Mode, qs []evalQuery, dump *bufio.Writer,
	plans *planStats, summaries int) (*evalScores, error) {
	scores := &evalScores{n: map[string]int{}, recall: map[string][]float64{}, rr: map[string]float64{}}
	readable, err := everyChannel(ctx, svc.DB)
	if err != nil {
		return nil, err
	}
	for i, q := range qs {
		ch, err := strconv.ParseInt(q.ChannelID, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("query %s: channel_id: %w", q.ID, err)
		}
		var rankedIDs []int64
		var extra map[string]any // for the dump
		if md == queryMode {
			resp, err := ans.Query(ctx, answer.Request{Question: q.Query, Filter: sqlite.Filter{Channels: []int64{ch}}, Readable: readable, RankedMessages: true,
				NoSummary: i >= summaries})
			if err != nil {
				return nil, fmt.Errorf("query %s: %w", q.ID, err)
			}
			plans.add(resp)
			if i < summaries {
				plans.summarized++
			}
			rankedIDs = resp.RankedMessages
		} else {
			resp, err := svc.Search(ctx, search.Request{Query: q.Query, Mode: md, Limit: search.MaxLimit,
				Filter: sqlite.Filter{Channels: []int64{ch}}, Readable: readable, RankedMessages: true, Candidates: dump != nil})
			if err != nil {
				return nil, fmt.Errorf("query %s: %w", q.ID, err)
			}
			rankedIDs = resp.RankedMessages
			if resp.Candidates != nil {
				extra = map[string]any{"channel_id": q.ChannelID, "relevant": q.Relevant, "kind": resp.Kind, "candidates": resp.Candidates,
					"reading": resp.Reading, "unread": resp.Unread, "lexical_left_out": resp.LexicalLeftOut}
			}
		}
		relevant := map[string]bool{}
		for _, id := range q.Relevant {
			relevant[id] = true
		}
		recall := make([]float64, len(evalKs))
		var rr float64
		ranked := make([]string, len(rankedIDs))
		for i, id := range rankedIDs {
			ranked[i] = strconv.FormatInt(id, 10)
		}
		for i, k := range evalKs {
			var hit int
			for _, id := range ranked[:min(k, len(ranked))] {
				if relevant[id] {
					hit++
				}
			}
			if len(relevant) > 0 {
				recall[i] = float64(hit) / float64(len(relevant))
			}
		}
		for i, id := range ranked {
			if relevant[id] {
				rr = 1 / float64(i+1)
				break
			}
		}
		scores.add(fmt.Sprint(q.Category), recall, rr)
		if dump != nil {
			line := map[string]any{"id": q.ID, "mode": md, "ranked": ranked}
			maps.Copy(line, extra)
			b, _ := json.Marshal(line)
			dump.Write(append(b, '\n'))
		}
	}
	return scores, nil
}

func printScores(w io.Writer, md search.Mode, s *evalScores) {
	fmt.Fprintf(w, "\nmode %s\n", md)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "category\tqueries\t")
	for _, k := range evalKs {
		fmt.Fprintf(tw, "R@%d\t", k)
	}
	fmt.Fprint(tw, "MRR\t\n")
	cats := slices.Clone(s.order)
	slices.SortFunc(cats, func(a, b string) int {
		if a == "all" {
			return 1
		}
		if b == "all" {
			return -1
		}
		if a < b {
			return -1
		}
		return 1
	})
	for _, c := range cats {
		n := float64(s.n[c])
		fmt.Fprintf(tw, "%s\t%d\t", c, s.n[c])
		for i := range evalKs {
			fmt.Fprintf(tw, "%.1f\t", 100*s.recall[c][i]/n)
		}
		fmt.Fprintf(tw, "%.3f\t\n", s.rr[c]/n)
	}
	tw.Flush()
}

// evalService is a search service over an evaluation's scratch database,
// with its keyword index and segment memberships loaded.
func evalService(ctx context.Context, cfg *Config, db *sqlite.DB) (*search.Service, error) {
	sc, err := cfg.SearchConfig()
	if err != nil {
		return nil, err
	}
	kw := &index.Keywords{DB: db}
	if err := kw.Load(ctx); err != nil {
		return nil, err
	}
	members := &index.Memberships{DB: db}
	if err := members.Load(ctx); err != nil {
		return nil, err
	}
	return &search.Service{DB: db, Config: sc, Keywords: kw, Memberships: members}, nil
}

// embedForEval loads the model, embeds the scratch database (conversations
// only with segmentsOnly) and gives svc its matrix; the caller closes the model.
func (m *Main) embedForEval(ctx context.Context, cfg *Config, db *sqlite.DB, svc *search.Service, segmentsOnly bool) (*embed.Model, error) {
	log, err := cfg.Logger(m.Stderr)
	if err != nil {
		return nil, err
	}
	model, err := cfg.LoadModelFor(ctx, db)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	job := &index.Job{DB: db, Embedder: model, Log: log, SegmentsOnly: segmentsOnly}
	messages, err := loadMessageModel(model)
	if err != nil {
		model.Close()
		return nil, err
	}
	if messages != nil {
		job.MessageEmbedder = messages
	}
	err = job.RunOnce(ctx)
	if messages != nil {
		messages.Close() // before model: it shares model's session
	}
	if err != nil {
		model.Close()
		return nil, err
	}
	fmt.Fprintf(m.Stderr, "embedded with %s on %s in %s\n", model.Name(), model.Backend(), time.Since(start).Round(time.Millisecond))
	if svc.Matrix, err = index.LoadMatrix(ctx, db, model.Dim()); err != nil {
		model.Close()
		return nil, err
	}
	return model, nil
}

// createDump creates path for a JSON Lines dump (nil where path is ""),
// and returns the function that flushes and closes it.
func createDump(path string) (*bufio.Writer, func(), error) {
	if path == "" {
		return nil, func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, nil, err
	}
	w := bufio.NewWriter(f)
	return w, func() { w.Flush(); f.Close() }, nil
}
