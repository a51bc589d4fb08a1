package search

// Keyword search: the query's terms and the keywords (with synonyms) as
// FTS5 expressions or for the in-memory index.

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"dsearch/searchd/lexical"
	"dsearch/searchd/sqlite"
)

// keywordAlternatives are "contains one of the keywords (or their
// synonyms) verbatim": each alternative's terms must all appear. A
// keyword of several Latin words is one term, a phrase.
func (q *query) keywordAlternatives() [][]lexical.Term {
	var alts [][]lexical.Term
	seen := map[string]bool{}
	add := func(k string) {
		k = strings.ToLower(strings.TrimSpace(k))
		if k == "" || seen[k] {
			return
		}
		seen[k] = true
		if terms := phraseTerms(k); len(terms) > 0 {
			alts = append(alts, terms)
		}
	}
	for _, k := range q.Keywords {
		add(k)
		for _, syn := range q.svc.Config.Synonyms[strings.ToLower(strings.TrimSpace(k))] {
			add(syn)
		}
	}
	return alts
}

func alternativesExpr(alts [][]lexical.Term) string {
	var parts []string
	for _, terms := range alts {
		parts = append(parts, "("+lexical.AllExpr(terms)+")")
	}
	return strings.Join(parts, " OR ")
}

// phraseTerms matches k as written: its words in order (one phrase when
// it is all Latin words; each CJK run by its bigrams).
func phraseTerms(k string) []lexical.Term {
	terms := lexical.Terms(k)
	words := make([]string, len(terms))
	for i, t := range terms {
		if t.CJK {
			return terms
		}
		words[i] = t.Text
	}
	if len(terms) <= 1 {
		return terms
	}
	return []lexical.Term{{Text: strings.Join(words, " ")}}
}

// lexical ranks messages by BM25: in memory when the keyword index is
// loaded and can answer, else with FTS5. Both rank the same way.
func (q *query) lexical(ctx context.Context) ([]Result, error) {
	terms, alts := lexical.Terms(q.text), q.keywordAlternatives()
	if len(terms) == 0 && len(alts) == 0 {
		return nil, nil
	}
	hits, err := q.lexicalHits(ctx, terms, alts)
	if err != nil {
		return nil, err
	}
	if len(hits) == 0 && len(alts) > 0 && len(terms) > 0 {
		// No message holds the query's words and a keyword: search
		// without the keywords and say so, as the semantic side does when
		// no conversation holds them (a plan's keyword can be a quoted
		// sentence that its paraphrase does not repeat).
		q.lexicalFallback = true
		if hits, err = q.lexicalHits(ctx, terms, nil); err != nil {
			return nil, err
		}
	}
	if len(q.named) > 0 {
		for i := range hits {
			hits[i].Score = q.boost(hits[i].AuthorID, hits[i].Score)
		}
		slices.SortStableFunc(hits, func(a, b sqlite.LexicalHit) int { return cmp.Compare(b.Score, a.Score) })
	}
	if err := q.segmentsOf(ctx, hits); err != nil {
		return nil, err
	}
	out := make([]Result, len(hits))
	for i, h := range hits {
		out[i] = Result{SegmentID: h.SegmentID, MessageID: h.MessageID, Score: h.Score,
			Components: map[string]Component{"lexical": {Rank: i + 1, Score: h.Score}}, Ranked: []int64{h.MessageID}}
	}
	return out, nil
}

// lexicalHits ranks the messages holding a term (and, with alts, one of
// each keyword's alternatives): in memory when the index is loaded,
// otherwise by FTS5, whose bm25() weighs words by every channel's
// messages, and so only for an audience that may read every channel.
func (q *query) lexicalHits(ctx context.Context, terms []lexical.Term, alts [][]lexical.Term) ([]sqlite.LexicalHit, error) {
	hits, ok, err := q.memoryLexical(ctx, terms, alts)
	if err != nil || ok {
		return hits, err
	}
	return q.svc.DB.Lexical(ctx, ftsExpr(terms, alts), q.Filter, q.svc.Config.Window)
}

// ErrKeywordsLoading: the keyword index is (re)loading, and the search's
// audience reads fewer than every channel, so FTS5 cannot rank for it.
var ErrKeywordsLoading = errors.New("the keyword index is loading (after a start or a large import); try again in a moment")

// DefaultKeywordWait is how long a search waits for the keyword index to
// load before it gives up with ErrKeywordsLoading: a start's load takes
// seconds per 650,000 messages.
const DefaultKeywordWait = 10 * time.Second

// narrowAudience: the search's audience may read some channels only (a
// readable list or a channel filter); otherwise every channel.
func (q *query) narrowAudience() bool {
	return narrow(q.Readable, q.Filter.Channels)
}

func narrow(readable, channels []int64) bool {
	return len(readable) > 0 || len(channels) > 0
}

// keywordIndex is the loaded keyword index, nil while it loads; for a
// narrow audience it waits, then fails (AwaitKeywords).
func (q *query) keywordIndex(ctx context.Context) (*lexical.Index, error) {
	return q.svc.keywordIndex(ctx, q.narrowAudience())
}

// AwaitKeywords returns ErrKeywordsLoading when a search for this audience
// (Request.Readable, Filter.Channels) would fail while the keyword index
// loads, after waiting for it as the search would: the question pipeline
// asks before it spends the LLM's time on a plan.
func (s *Service) AwaitKeywords(ctx context.Context, readable, channels []int64) error {
	if s.Keywords == nil || !narrow(readable, channels) {
		return nil
	}
	_, err := s.keywordIndex(ctx, true)
	return err
}

func (s *Service) keywordIndex(ctx context.Context, narrow bool) (*lexical.Index, error) {
	deadline := time.Now().Add(cmp.Or(s.KeywordWait, DefaultKeywordWait))
	for {
		idx, err := s.Keywords.Current(ctx)
		if err != nil || idx != nil || !narrow {
			return idx, err
		}
		if time.Now().After(deadline) {
			return nil, ErrKeywordsLoading
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// ftsExpr is the FTS5 expression for any of the terms and, when there are
// keywords, one of their alternatives.
func ftsExpr(terms []lexical.Term, alts [][]lexical.Term) string {
	expr, kw := lexical.MatchExpr(terms), alternativesExpr(alts)
	switch {
	case expr == "":
		return kw
	case kw == "":
		return expr
	}
	return "(" + expr + ") AND (" + kw + ")"
}

// audience is the channels a word's statistics are counted over, in
// ranking (BM25) and judging (support): Readable, or the filter's
// channels (none: every channel), with their public threads. Never a
// channel the audience cannot read: how often a word is said there would
// show in a score.
// Read once a query: ranking and judging both ask.
func (q *query) audience(ctx context.Context) ([]int64, error) {
	q.audienceOnce.Do(func() {
		channels := q.Readable
		if len(channels) == 0 {
			channels = q.Filter.Channels
		}
		f, err := q.svc.DB.WithThreads(ctx, sqlite.Filter{Channels: channels})
		q.audienceIDs, q.audienceErr = f.Channels, err
	})
	return q.audienceIDs, q.audienceErr
}

// memoryLexical ranks with the in-memory keyword index, when it is loaded
// (ok); BM25's statistics are the audience's. A keyword phrase needs word
// positions, which only FTS5 keeps: for an audience that may read every
// channel FTS5 ranks it, for a narrower one FTS5 lists the messages
// holding it and the index ranks them (holdingPhrases).
func (q *query) memoryLexical(ctx context.Context, terms []lexical.Term, alts [][]lexical.Term) (hits []sqlite.LexicalHit, ok bool, err error) {
	mq := lexical.Query{Terms: terms, Required: alts, Limit: q.svc.Config.Window}
	phrases := !lexical.Supports(mq)
	if q.svc.Keywords == nil || phrases && !q.narrowAudience() {
		return nil, false, nil
	}
	idx, err := q.keywordIndex(ctx)
	if err != nil || idx == nil {
		return nil, false, err
	}
	f, err := q.svc.DB.WithThreads(ctx, q.Filter)
	if err != nil {
		return nil, false, err
	}
	mq.Filter = lexical.Filter{Channels: f.Channels, Authors: f.Authors, Since: f.Since, Until: f.Until}
	if mq.Scope = f.Channels; len(q.Readable) > 0 {
		if mq.Scope, err = q.audience(ctx); err != nil {
			return nil, false, err
		}
	}
	var found []lexical.Hit
	if phrases {
		found, err = q.holdingPhrases(ctx, idx, mq, alternativesExpr(alts))
		if err != nil {
			return nil, false, err
		}
	} else {
		found = idx.Search(mq)
	}
	hits = make([]sqlite.LexicalHit, len(found))
	for i, h := range found {
		hits[i] = sqlite.LexicalHit{MessageID: h.ID, AuthorID: h.AuthorID, Score: h.Score} // segments: lexical()
	}
	return hits, true, nil
}

// holdingPhrases ranks, as idx.Search(mq) would, the messages that match
// the keywords' FTS5 expression: FTS5 lists the messages holding a
// phrase (in one query: a phrase is rarer than its words), and the index
// ranks those of them holding the phrase's words.
func (q *query) holdingPhrases(ctx context.Context, idx *lexical.Index, mq lexical.Query, expr string) ([]lexical.Hit, error) {
	holding, err := q.svc.DB.Matching(ctx, expr)
	if err != nil {
		return nil, err
	}
	mq.Required, mq.Among = phraseWords(mq.Required), holding
	return idx.Search(mq), nil
}

// phraseWords are alternatives with each phrase replaced by its words,
// all required: what the index can check of it.
func phraseWords(alts [][]lexical.Term) [][]lexical.Term {
	out := make([][]lexical.Term, len(alts))
	for i, terms := range alts {
		for _, t := range terms {
			if !t.CJK && strings.ContainsAny(t.Text, " \t") {
				out[i] = append(out[i], lexical.Terms(t.Text)...)
			} else {
				out[i] = append(out[i], t)
			}
		}
	}
	return out
}

// segmentsOf fills in the segments of the hits the in-memory index found
// (FTS5's come with theirs). A first page of keyword results shows, and
// its cursor remembers, only its own hits' segments: they come with the
// messages it shows. Hybrid and later pages (which skip the segments
// shown before) need every hit's.
func (q *query) segmentsOf(ctx context.Context, hits []sqlite.LexicalHit) error {
	firstPage := q.Mode == Lexical && q.Cursor == ""
	if firstPage {
		hits = hits[:min(len(hits), q.Limit)]
	}
	var ids []int64
	for _, h := range hits {
		if h.SegmentID == 0 {
			ids = append(ids, h.MessageID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	segs := map[int64]int64{}
	if firstPage {
		ms, err := q.messagesAround(ctx, ids) // with the neighbours the page shows
		if err != nil {
			return err
		}
		for id, m := range ms {
			segs[id] = m.SegmentID
		}
	} else {
		var err error
		if segs, err = q.svc.DB.SegmentsOf(ctx, ids); err != nil {
			return err
		}
	}
	for i := range hits {
		if hits[i].SegmentID == 0 {
			hits[i].SegmentID = segs[hits[i].MessageID]
		}
	}
	return nil
}
