package search

// Names in the query: people recognized by any name they used, taken out
// of the query text, their messages weighted up.

import (
	"context"
	"slices"
	"strings"
	"unicode/utf8"
)

// resolveNames finds people the query names, by any name they were seen
// under, takes their names out of the query text, and remembers them
// (and Request.Named) for the author boost. A Korean name may carry a particle (민수가).
// Only authors seen in the filter's channels are recognized.
func (q *query) resolveNames(ctx context.Context) error {
	names, err := q.svc.DB.AuthorNames(ctx, q.Filter.Channels)
	if err != nil {
		return err
	}
	var ids []int64
	q.text, ids = NamesIn(q.Query, names)
	for _, id := range append(ids, q.Named...) {
		if q.named == nil {
			q.named = map[int64]bool{}
		}
		q.named[id] = true
	}
	return nil
}

// NamesIn finds the people a text names, by any of their names (names maps
// lower-cased names to user IDs; a Korean name may carry a particle, as
// in 민수가), and returns the text without those words, and the IDs. A text
// that is nothing but names is returned whole.
func NamesIn(text string, names map[string][]int64) (string, []int64) {
	var ids []int64
	var kept []string
	for _, w := range strings.Fields(text) {
		bare := strings.TrimSuffix(strings.ToLower(strings.Trim(w, ".,!?;:()'\"“”’")), "'s")
		found := matchName(bare, names)
		if found == nil {
			kept = append(kept, w)
			continue
		}
		for _, id := range found {
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	if len(kept) == 0 {
		return text, ids
	}
	return strings.Join(kept, " "), ids
}

// matchName returns the users a word names: an exact name, or the longest
// Hangul name it starts with, followed by a particle of one or two
// syllables.
func matchName(w string, names map[string][]int64) []int64 {
	if ids := names[w]; ids != nil {
		return ids
	}
	var best string
	for n := range names {
		if utf8.RuneCountInString(n) >= 2 && len(n) > len(best) && strings.HasPrefix(w, n) &&
			utf8.RuneCountInString(w)-utf8.RuneCountInString(n) <= 2 && hangulOnly(n) {
			best = n
		}
	}
	if best != "" {
		return names[best]
	}
	return nil
}

func hangulOnly(s string) bool {
	for _, r := range s {
		if r < 0xAC00 || r > 0xD7A3 {
			return false
		}
	}
	return true
}

// boost weighs up a score of a message by a person the query names.
func (q *query) boost(author int64, score float64) float64 {
	if q.named[author] && score > 0 {
		return score * (1 + q.svc.Config.AuthorBoost)
	}
	return score
}
