package search

// Message-level rescoring: each result segment's messages scored against
// the query with their own vectors.

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"unicode/utf8"

	"dsearch/searchd/index"
	"dsearch/searchd/segment"
	"dsearch/searchd/sqlite"
)

// withinSegment is a segment's messages ranked against the query.
type withinSegment struct {
	messages  []sqlite.StoredMessage // time order
	ranked    []int64                // best first
	bestScore *float64               // nil when no message had a vector
	// scores are the length-weighted similarities of the messages that
	// have a vector.
	scores map[int64]float64
	// judged are the messages' similarities as support judges where
	// the meaning is (Config.SupportNear): length-weighted, with a
	// reply's credit, without the boost of a person named.
	judged map[int64]float64
	// bestSim is the best length-weighted similarity of a message, as
	// is (no credit, no boost): what a confidence compares (hasSim: one
	// had a vector).
	bestSim float64
	hasSim  bool
}

// rankWithin scores the messages of each segment (up to RescoreLimit)
// against the query, using stored message vectors and embedding missing
// ones within the time budget.
func (q *query) rankWithin(ctx context.Context, segs []int64) error {
	if q.within == nil {
		q.within = map[int64]*withinSegment{}
	}
	var todo []int64
	for _, id := range segs {
		if _, ok := q.within[id]; !ok && id != 0 {
			todo = append(todo, id)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	msgs, err := q.svc.DB.SegmentMessages(ctx, todo, q.svc.Config.RescoreLimit)
	if err != nil {
		return err
	}
	var ids []int64
	for _, ms := range msgs {
		for _, m := range ms {
			ids = append(ids, m.ID)
		}
	}
	vecs, err := q.svc.DB.MessageVectors(ctx, ids, len(q.vec))
	if err != nil {
		return err
	}
	q.embedMissing(ctx, msgs, vecs)
	full := float64(q.svc.Config.FullChars)
	for _, seg := range todo {
		ms := msgs[seg]
		ws := &withinSegment{messages: ms, scores: map[int64]float64{}, judged: map[int64]float64{}}
		type scored struct {
			id    int64
			score float64
			has   bool
		}
		sims := make([]float64, len(ms)) // length-weighted, before the author boost
		has := make([]bool, len(ms))
		asks := make([]bool, len(ms)) // holds a question mark (not one in a link)
		at := make(map[int64]int, len(ms))
		for i, m := range ms {
			at[m.ID] = i
			if v, ok := vecs[m.ID]; ok {
				text := segment.Clean(m.Content)
				sims[i], has[i] = float64(index.Dot(q.vec, v))*min(1, float64(utf8.RuneCountInString(text))/full), true
				asks[i] = strings.ContainsAny(text, "?？")
				q.msgSpread.Add(sims[i])
				if !ws.hasSim || sims[i] > ws.bestSim {
					ws.bestSim, ws.hasSim = sims[i], true
				}
			}
		}
		sc := make([]scored, len(ms))
		for i, m := range ms {
			sc[i] = scored{id: m.ID}
			if has[i] {
				sim := sims[i]
				if j := answerTo(ms, asks, at, i); j >= 0 {
					asked := sims[j]
					if k := askedAbout(ms, at, j, ms[i].AuthorID); k >= 0 && has[k] {
						asked = max(asked, sims[k])
					}
					sim = max(sim, q.svc.Config.AnswerCredit*asked)
				}
				ws.judged[m.ID] = sim
				s := q.boost(m.AuthorID, sim)
				sc[i].score, sc[i].has = s, true
				ws.scores[m.ID] = s
				if ws.bestScore == nil || s > *ws.bestScore {
					best := s
					ws.bestScore = &best
				}
			}
		}
		slices.SortStableFunc(sc, func(a, b scored) int {
			if a.has != b.has {
				if a.has {
					return -1
				}
				return 1
			}
			return cmp.Compare(b.score, a.score)
		})
		for _, s := range sc {
			ws.ranked = append(ws.ranked, s.id)
		}
		q.within[seg] = ws
	}
	return nil
}

// answerTo is the index of the question message i answers, or -1: the
// one it follows (follows), when someone else wrote it and it asks
// something (asks: a question mark in its cleaned text, which has a
// vector). In chat an answer seldom repeats the question ("5 years
// already!" to "How long have you been married?"): the question holds
// the words a search matches, so its reply is credited with the
// question's match (Config.AnswerCredit, a little under it so that the
// question itself stays first). locomo-dev: recall@10 76.5 → 77.5 in
// pipeline mode, 5 questions better and none worse (docs/retrieval.md).
func answerTo(ms []sqlite.StoredMessage, asks []bool, at map[int64]int, i int) int {
	j := follows(ms, at, i)
	if j < 0 || ms[j].AuthorID == ms[i].AuthorID || !asks[j] {
		return -1
	}
	return j
}

// askedAbout is the index of the answerer's own message that question j
// followed up, or -1: the one j follows (follows), when the answerer
// wrote it. "Check out my painting for the art show!" / "What inspired
// you?" / "I painted this after I visited an LGBTQ center": the answer
// goes on from its author's first message, which holds the words a
// search matches, and the question ("What inspired you?") often holds
// none; so the answer is credited with the better of the two.
// locomo-dev, pipeline mode: recall@10 77.5 → 78.2, recall@5 67.5 → 68.5
// (7 questions better, 2 worse; docs/retrieval.md).
func askedAbout(ms []sqlite.StoredMessage, at map[int64]int, j int, answerer int64) int {
	k := follows(ms, at, j)
	if k < 0 || ms[k].AuthorID != answerer {
		return -1
	}
	return k
}

// follows is the index of the message i goes on from, or -1: the one it
// replies to on Discord, when that is earlier in the segment, else the
// one just before it.
func follows(ms []sqlite.StoredMessage, at map[int64]int, i int) int {
	if k, ok := at[ms[i].ReplyToID]; ok && ms[i].ReplyToID != 0 && k < i {
		return k
	}
	return i - 1
}

// embedMissing embeds, within the rescoring budget, messages long enough
// to matter that have no stored vector yet (just imported); on timeout
// they are ranked without one.
func (q *query) embedMissing(ctx context.Context, msgs map[int64][]sqlite.StoredMessage, vecs map[int64][]float32) {
	var ids []int64
	var texts []string
	for _, ms := range msgs {
		for _, m := range ms {
			if _, ok := vecs[m.ID]; ok {
				continue
			}
			if t := segment.Clean(m.Content); utf8.RuneCountInString(t) >= index.MinMessageChars {
				ids = append(ids, m.ID)
				texts = append(texts, t)
			}
		}
	}
	if len(texts) == 0 || q.svc.Config.RescoreBudget <= 0 || q.svc.Busy != nil && q.svc.Busy() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, q.svc.Config.RescoreBudget)
	defer cancel()
	out, err := q.svc.Embedder.EmbedPassages(ctx, texts)
	if err != nil {
		return
	}
	q.embedded += len(out)
	for i, v := range out {
		vecs[ids[i]] = v
	}
}

// messageScores ranks every message of the given segment results by
// w·segment cosine + (1−w)·message score; messages without a vector
// follow, by their segment's order.
func (q *query) messageScores(ctx context.Context, results []Result) ([]int64, error) {
	scored, err := q.scoredMessages(ctx, results)
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(scored))
	for i, s := range scored {
		out[i] = s.id
	}
	return out, nil
}

// scoredMessage is a message's place in a ranking; has: scored by its own
// vector (else it follows those that are, by its segment's score).
type scoredMessage struct {
	id    int64
	score float64
	has   bool
}

// scoredMessages is messageScores with the scores, each message once.
func (q *query) scoredMessages(ctx context.Context, results []Result) ([]scoredMessage, error) {
	if err := q.rankWithinResults(ctx, results); err != nil {
		return nil, err
	}
	w := q.svc.Config.SegmentWeight
	var with, without []scoredMessage
	for _, r := range results {
		seg := q.windowScores(r)
		ws := q.within[r.SegmentID]
		for _, id := range ws.ranked {
			if s, ok := ws.scores[id]; ok {
				with = append(with, scoredMessage{id, w*seg(id) + (1-w)*s, true})
			} else {
				without = append(without, scoredMessage{id, seg(id), false})
			}
		}
	}
	order := func(a, b scoredMessage) int { return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.id, b.id)) }
	slices.SortStableFunc(with, order)
	slices.SortStableFunc(without, order)
	seen := map[int64]bool{}
	out := make([]scoredMessage, 0, len(with)+len(without))
	for _, l := range [][]scoredMessage{with, without} {
		for _, s := range l {
			if !seen[s.id] {
				seen[s.id] = true
				out = append(out, s)
			}
		}
	}
	return out, nil
}

// windowScores gives each message of a result its segment score: the
// similarity of the window holding it, for a segment embedded as several
// windows (the tail of a long conversation is not its head), else the
// segment's.
func (q *query) windowScores(r Result) func(message int64) float64 {
	seg := r.Components["semantic"].Score
	var wins []index.WindowScore
	if q.svc.Matrix != nil && q.vec != nil {
		wins = q.svc.Matrix.WindowScores(q.vec, r.SegmentID)
	}
	if len(wins) < 2 {
		return func(int64) float64 { return seg }
	}
	at := map[int64]float64{}
	for i, m := range q.within[r.SegmentID].messages {
		k := len(wins) - 1
		for k > 0 && wins[k].First > i {
			k--
		}
		at[m.ID] = float64(wins[k].Score)
	}
	return func(id int64) float64 { return at[id] }
}

func (q *query) rankWithinResults(ctx context.Context, results []Result) error {
	ids := make([]int64, len(results))
	for i, r := range results {
		ids[i] = r.SegmentID
	}
	return q.rankWithin(ctx, ids)
}
