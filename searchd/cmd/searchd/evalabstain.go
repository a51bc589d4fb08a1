package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"

	"dsearch/searchd/answer"
	"dsearch/searchd/embed"
	"dsearch/searchd/search"
	"dsearch/searchd/sqlite"
)

// evalAbstain measures whether search says so when nothing matches
// (search.Confidence): every set's questions are asked three ways, in
// one scratch database holding all the sets:
//
//   - answerable: in their own channel, as eval retrieval asks them;
//   - in-domain unanswerable: in another channel of the same set (a
//     set with several, such as LoCoMo's conversations), the speakers'
//     names taken out, so that the topic itself must decide;
//   - cross-set unanswerable: in the channel of the next set given
//     (the last set's in the first's): KorQuAD questions over LoCoMo,
//     LoCoMo's over ko-sts, and so on.
//
// It reports, per set and kind, how many were refused (no confident
// result), in /v1/search's default mode and in /v1/query without an LLM,
// and for the answerable ones recall@10 and recall@10 kept (a refused
// question counted as finding nothing).
func (m *Main) evalAbstain(ctx context.Context, cfg *Config, sets []string, dump, keep string, segmentsOnly bool, every int) error {
	if len(sets) < 2 {
		return errors.New("eval abstain: give two or more set directories (each: exports and queries.jsonl)")
	}
	if err := cfg.validate(); err != nil {
		return err
	}
	type set struct {
		name     string
		queries  []evalQuery
		channels []int64 // the queries' channels, in order of first use
	}
	loaded := make([]set, len(sets))
	for i, dir := range sets {
		s := &loaded[i]
		s.name = filepath.Base(filepath.Clean(dir))
		var err error
		if s.queries, err = readQueries(filepath.Join(dir, "queries.jsonl")); err != nil {
			return err
		}
		for _, q := range s.queries {
			ch, err := strconv.ParseInt(q.ChannelID, 10, 64)
			if err != nil {
				return fmt.Errorf("%s: query %s: channel_id: %w", dir, q.ID, err)
			}
			if !slices.Contains(s.channels, ch) {
				s.channels = append(s.channels, ch)
			}
		}
	}
	db, done, err := scratchImport(ctx, cfg, sets, keep)
	if err != nil {
		return err
	}
	defer done()
	svc, err := evalService(ctx, cfg, db)
	if err != nil {
		return err
	}
	model, err := m.embedForEval(ctx, cfg, db, svc, segmentsOnly)
	if err != nil {
		return err
	}
	defer model.Close()
	if segmentsOnly {
		// Nor on the fly: messages rank without vectors.
		svc.Busy = func() bool { return true }
	}
	svc.Measure = true // the evidence the rule does not use, for the dump
	// Each question is asked up to six times (three kinds, two ways):
	// embedded once.
	svc.Embedder = &memoModel{Model: model, vecs: map[string][]float32{}, passages: map[string][]float32{}}
	if svc.Config.MinSimilarity < 0 {
		svc.Config.MinSimilarity = model.Config().MinSimilarity // as serve has it
	}
	ans, err := cfg.AnswerService(db, svc)
	if err != nil {
		return err
	}
	ans.LLM = nil // the rules plan: what is measured is the search's confidence
	names, err := db.AuthorNames(ctx, nil)
	if err != nil {
		return err
	}
	dumpw, closeDump, err := createDump(dump)
	if err != nil {
		return err
	}
	defer closeDump()
	readable, err := everyChannel(ctx, db) // as the bot asks for a member who reads them all
	if err != nil {
		return err
	}
	tally := map[abstainKey]*abstainTally{}
	var order []abstainKey
	ask := func(s *set, kind string, q evalQuery, text string, channel int64) error {
		for _, via := range []string{"search", "query"} {
			k := abstainKey{s.name, kind, via}
			t := tally[k]
			if t == nil {
				t = &abstainTally{}
				tally[k] = t
				order = append(order, k)
			}
			c, err := askAbstain(ctx, svc, ans, via, text, channel, readable)
			if err != nil {
				return fmt.Errorf("%s %s query %s: %w", s.name, kind, q.ID, err)
			}
			recall := -1.0
			if kind == "answerable" {
				recall = recallAt(c.ranked, q.Relevant, 10)
			}
			t.add(c.refused, recall)
			if dumpw != nil {
				b, _ := json.Marshal(map[string]any{"set": s.name, "kind": kind, "via": via, "id": q.ID, "channel_id": strconv.FormatInt(channel, 10),
					"refused": c.refused, "recall10": recall, "top": c.top})
				dumpw.Write(append(b, '\n'))
			}
		}
		return nil
	}
	for i := range loaded {
		s := &loaded[i]
		other := &loaded[(i+1)%len(loaded)]
		for n, q := range s.queries {
			if n%max(every, 1) != 0 {
				continue
			}
			ch, _ := strconv.ParseInt(q.ChannelID, 10, 64)
			if err := ask(s, "answerable", q, q.Query, ch); err != nil {
				return err
			}
			if len(s.channels) > 1 {
				// The next channel of the same set, the names of people
				// taken out (a person who never wrote there would give
				// it away).
				at := slices.Index(s.channels, ch)
				text, _ := search.NamesIn(q.Query, names)
				if err := ask(s, "in-domain", q, text, s.channels[(at+1)%len(s.channels)]); err != nil {
					return err
				}
			}
			at := slices.Index(s.channels, ch)
			if err := ask(s, "cross-set", q, q.Query, other.channels[at%len(other.channels)]); err != nil {
				return err
			}
		}
	}
	printAbstain(m.Stdout, model.Name(), order, tally)
	return nil
}

type abstainKey struct{ set, kind, via string }

// abstainTally counts refusals and, for answerable questions, recall@10
// with and without them.
type abstainTally struct {
	n, refused, answerable int
	recall, kept           float64
}

func (t *abstainTally) add(refused bool, recall float64) {
	t.n++
	if refused {
		t.refused++
	}
	if recall >= 0 {
		t.answerable++
		t.recall += recall
		if !refused {
			t.kept += recall
		}
	}
}

// abstainCase is one question's outcome.
type abstainCase struct {
	refused bool
	ranked  []int64
	top     []map[string]any // the first results' confidence, for the dump
}

// askAbstain asks text in channel, for an audience that may read
// readable, by /v1/search's default mode or by /v1/query's pipeline
// (rules plan, no summary).
func askAbstain(ctx context.Context, svc *search.Service, ans *answer.Service, via, text string, channel int64, readable []int64) (abstainCase, error) {
	f := sqlite.Filter{Channels: []int64{channel}}
	var c abstainCase
	var results []search.Result
	if via == "search" {
		r, err := svc.Search(ctx, search.Request{Query: text, Filter: f, Readable: readable, Limit: search.DefaultLimit, RankedMessages: true})
		if err != nil {
			return c, err
		}
		c.refused, c.ranked, results = r.NoConfidentResults || len(r.Results) == 0, r.RankedMessages, r.Results
	} else {
		r, err := ans.Query(ctx, answer.Request{Question: text, Filter: f, Readable: readable, RankedMessages: true, NoSummary: true})
		if err != nil {
			return c, err
		}
		c.refused, c.ranked, results = r.NoConfidentResults || r.NoResults, r.RankedMessages, r.Results
	}
	for _, r := range results[:min(3, len(results))] {
		cf := r.Confidence
		top := map[string]any{"high": cf.High, "standout": cf.Standout, "support": cf.Support, "closeness": cf.Closeness,
			"z": cf.Evidence.Z, "n": cf.Evidence.N, "message_z": cf.Evidence.MessageZ, "m": cf.Evidence.M, "rare_support": cf.Evidence.RareSupport, "chance": cf.Evidence.Chance, "length": cf.Evidence.Length,
			"lead": cf.Evidence.Lead, "cosine": cf.Evidence.Cosine, "message_cosine": cf.Evidence.MessageCosine, "words": cf.Evidence.Words, "found": cf.Evidence.Found,
			"mean": cf.Evidence.Mean, "std": cf.Evidence.Std, "self": cf.Evidence.Self, "other_script": cf.Evidence.OtherScript, "terms": dumpTerms(cf.Evidence.Terms), "together": cf.Together,
			"semantic_rank": r.Components["semantic"].Rank, "lexical_rank": r.Components["lexical"].Rank}
		if cf.Evidence.NearJudged {
			top["near_support"] = cf.Evidence.NearSupport
		}
		c.top = append(c.top, top)
	}
	return c, nil
}

// dumpTerms are the content words' evidence as the dump writes it.
func dumpTerms(ts []search.TermEvidence) []map[string]any {
	out := []map[string]any{}
	for _, t := range ts {
		out = append(out, map[string]any{"text": t.Text, "held": t.Held, "chance": t.Chance, "p": t.P})
	}
	return out
}

func recallAt(ranked []int64, relevant []string, k int) float64 {
	if len(relevant) == 0 {
		return 0
	}
	hit := 0
	for _, id := range ranked[:min(k, len(ranked))] {
		if slices.Contains(relevant, strconv.FormatInt(id, 10)) {
			hit++
		}
	}
	return float64(hit) / float64(len(relevant))
}

func printAbstain(w io.Writer, model string, order []abstainKey, tally map[abstainKey]*abstainTally) {
	fmt.Fprintf(w, "%s\n", model)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "set\tkind\tvia\tquestions\trefused %\tR@10\tR@10 kept\t\n")
	slices.SortStableFunc(order, func(a, b abstainKey) int { return strings.Compare(a.via, b.via) })
	for _, k := range order {
		t := tally[k]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.1f\t", k.set, k.kind, k.via, t.n, 100*float64(t.refused)/float64(t.n))
		if t.answerable > 0 {
			fmt.Fprintf(tw, "%.1f\t%.1f\t\n", 100*t.recall/float64(t.answerable), 100*t.kept/float64(t.answerable))
		} else {
			fmt.Fprint(tw, "\t\t\n")
		}
	}
	tw.Flush()
}

// memoModel embeds each query once (and once as a passage).
type memoModel struct {
	*embed.Model
	mu       sync.Mutex
	vecs     map[string][]float32
	passages map[string][]float32
}

// EmbedPassages remembers a single text's vector: search embeds its
// query as a passage too (search.Confidence.Closeness).
func (m *memoModel) EmbedPassages(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) != 1 {
		return m.Model.EmbedPassages(ctx, texts)
	}
	m.mu.Lock()
	v, ok := m.passages[texts[0]]
	m.mu.Unlock()
	if ok {
		return [][]float32{v}, nil
	}
	vs, err := m.Model.EmbedPassages(ctx, texts)
	if err == nil && len(vs) == 1 {
		m.mu.Lock()
		m.passages[texts[0]] = vs[0]
		m.mu.Unlock()
	}
	return vs, err
}

func (m *memoModel) EmbedQuery(ctx context.Context, q string) ([]float32, error) {
	m.mu.Lock()
	v, ok := m.vecs[q]
	m.mu.Unlock()
	if ok {
		return v, nil
	}
	v, err := m.Model.EmbedQuery(ctx, q)
	if err == nil {
		m.mu.Lock()
		m.vecs[q] = v
		m.mu.Unlock()
	}
	return v, err
}
