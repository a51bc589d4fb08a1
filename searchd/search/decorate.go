package search

import (
	"context"
	"maps"
	"slices"
	"strings"

	"dsearch/searchd/lexical"
	"dsearch/searchd/sqlite"
)

// maxPreviews bounds the messages shown per result.
const maxPreviews = 6

// decorate fills what a page of results shows: where and when, who, and
// preview messages.
func (q *query) decorate(ctx context.Context, page []Result) error {
	if len(page) == 0 {
		return nil
	}
	if q.Mode == Lexical {
		return q.decorateMessages(ctx, page)
	}
	ids := make([]int64, len(page))
	for i, r := range page {
		ids[i] = r.SegmentID
	}
	if err := q.rankWithin(ctx, ids); err != nil {
		return err
	}
	infos, err := q.svc.DB.SegmentInfos(ctx, ids)
	if err != nil {
		return err
	}
	for i := range page {
		r := &page[i]
		info := infos[r.SegmentID]
		r.ChannelID, r.GuildID, r.StartAt, r.MessageCount = info.ChannelID, info.GuildID, info.StartAt, info.MessageCount
		ws := q.within[r.SegmentID]
		if ws == nil {
			continue
		}
		r.Ranked = mergeRanked(r.Ranked, ws.ranked)
		if r.MessageID == 0 && len(ws.ranked) > 0 {
			r.MessageID = ws.ranked[0]
		}
		r.Authors, r.AuthorIDs = authors(ws.messages)
		r.Previews = previews(ws.messages, q.terms, r.MessageID)
	}
	return nil
}

// previews picks the messages that contain a query term, each with its
// neighbours (±1); without any, the best message ±1.
func previews(ms []sqlite.StoredMessage, terms []lexical.Term, best int64) []sqlite.StoredMessage {
	pick := map[int]bool{}
	around := func(i int) {
		for j := max(i-1, 0); j <= min(i+1, len(ms)-1); j++ {
			pick[j] = true
		}
	}
	holds := holdsAny(terms)
	for i, m := range ms {
		if len(pick) >= maxPreviews {
			break
		}
		if holds(m.Content) {
			around(i)
		}
	}
	if len(pick) == 0 {
		for i, m := range ms {
			if m.ID == best {
				around(i)
			}
		}
	}
	idx := make([]int, 0, len(pick))
	for i := range pick {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	out := make([]sqlite.StoredMessage, 0, min(len(idx), maxPreviews))
	for _, i := range idx[:min(len(idx), maxPreviews)] {
		out = append(out, ms[i])
	}
	return out
}

// holdsAny returns whether a text holds one of terms, as lexical.Contains
// tells each: the terms folded once, and each text split and folded once
// for them all (previews asks it of up to 80 messages a result, and
// lexical.Contains, asked term by term, split each message again for
// each term: a tenth of a semantic search's CPU).
func holdsAny(terms []lexical.Term) func(text string) bool {
	var cjk, words []string
	for _, t := range terms {
		if t.CJK {
			cjk = append(cjk, t.Text)
		} else {
			words = append(words, lexical.FoldTerm(t))
		}
	}
	return func(text string) bool {
		lower := strings.ToLower(text)
		for _, t := range cjk {
			if strings.Contains(lower, t) {
				return true
			}
		}
		if len(words) == 0 {
			return false
		}
		for _, w := range lexical.Terms(lower) {
			if !w.CJK && slices.Contains(words, lexical.FoldTerm(w)) {
				return true
			}
		}
		return false
	}
}

func authors(ms []sqlite.StoredMessage) (names []string, ids []int64) {
	seen := map[int64]bool{}
	for _, m := range ms {
		if !seen[m.AuthorID] && len(names) < 5 {
			seen[m.AuthorID] = true
			names, ids = append(names, m.AuthorName), append(ids, m.AuthorID)
		}
	}
	return names, ids
}

func (q *query) decorateMessages(ctx context.Context, page []Result) error {
	ids := make([]int64, len(page))
	for i, r := range page {
		ids[i] = r.MessageID
	}
	msgs, err := q.messagesAround(ctx, ids)
	if err != nil {
		return err
	}
	for i := range page {
		r := &page[i]
		m, ok := msgs[r.MessageID]
		if !ok {
			continue // deleted meanwhile
		}
		r.ChannelID, r.GuildID, r.StartAt, r.MessageCount = m.ChannelID, m.GuildID, m.CreatedAt, 1
		r.Authors, r.AuthorIDs = []string{m.AuthorName}, []int64{m.AuthorID}
		r.Previews = nil
		for _, id := range []int64{q.around[m.ID][0], m.ID, q.around[m.ID][1]} {
			if n, ok := msgs[id]; ok {
				r.Previews = append(r.Previews, n)
			}
		}
	}
	return nil
}

// messages returns the stored messages among ids, each read once per
// search (judging the page and showing it read the same ones).
func (q *query) messages(ctx context.Context, ids []int64) (map[int64]sqlite.StoredMessage, error) {
	if q.read == nil {
		q.read = map[int64]sqlite.StoredMessage{}
	}
	var missing []int64
	for _, id := range ids {
		if _, ok := q.read[id]; !ok && id != 0 {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		got, err := q.svc.DB.Messages(ctx, missing)
		if err != nil {
			return nil, err
		}
		maps.Copy(q.read, got)
	}
	return q.read, nil
}

// messagesAround is messages, with the neighbours of each (q.around):
// what a page of keyword results shows, read in one statement.
func (q *query) messagesAround(ctx context.Context, ids []int64) (map[int64]sqlite.StoredMessage, error) {
	if q.read == nil {
		q.read = map[int64]sqlite.StoredMessage{}
	}
	if q.around == nil {
		q.around = map[int64][2]int64{}
	}
	var missing []int64
	for _, id := range ids {
		if _, ok := q.around[id]; !ok && id != 0 {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		got, around, err := q.svc.DB.MessagesAround(ctx, missing)
		if err != nil {
			return nil, err
		}
		maps.Copy(q.read, got)
		maps.Copy(q.around, around)
	}
	return q.read, nil
}
