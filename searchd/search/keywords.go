package search

// Keyword search: the query's terms and the keywords (with synonyms) as
// FTS5 expressions or for the in-memory index.

import (
	"cmp"
	"context"
	"slices"
	"strings"

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
// otherwise by FTS5.
func (q *query) lexicalHits(ctx context.Context, terms []lexical.Term, alts [][]lexical.Term) ([]sqlite.LexicalHit, error) {
	hits, ok, err := q.memoryLexical(ctx, terms, alts)
	if err != nil || ok {
		return hits, err
	}
	return q.svc.DB.Lexical(ctx, ftsExpr(terms, alts), q.Filter, q.svc.Config.Window)
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
// and can answer the query (ok); BM25's statistics are the audience's.
func (q *query) memoryLexical(ctx context.Context, terms []lexical.Term, alts [][]lexical.Term) (hits []sqlite.LexicalHit, ok bool, err error) {
	mq := lexical.Query{Terms: terms, Required: alts, Limit: q.svc.Config.Window}
	if q.svc.Keywords == nil || !lexical.Supports(mq) {
		return nil, false, nil
	}
	idx, err := q.svc.Keywords.Current(ctx)
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
	found := idx.Search(mq)
	hits = make([]sqlite.LexicalHit, len(found))
	for i, h := range found {
		hits[i] = sqlite.LexicalHit{MessageID: h.ID, AuthorID: h.AuthorID, Score: h.Score} // segments: lexical()
	}
	return hits, true, nil
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
