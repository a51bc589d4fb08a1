package answer

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"dsearch/searchd/search"
)

// names maps every known name (lower-cased) to user IDs: the names of
// authors seen in channels, when the filter names them, and the aliases
// of those authors. A name or alias of someone seen only elsewhere is not
// recognized, so a question cannot tell who they are.
func (s *Service) names(ctx context.Context, channels []int64) (map[string][]int64, error) {
	names, err := s.DB.AuthorNames(ctx, channels)
	if err != nil {
		return nil, err
	}
	known := map[int64]bool{}
	for _, ids := range names {
		for _, id := range ids {
			known[id] = true
		}
	}
	for n, ids := range s.Aliases {
		n = strings.ToLower(n)
		for _, id := range ids {
			if (len(channels) == 0 || known[id]) && !slices.Contains(names[n], id) {
				names[n] = append(names[n], id)
			}
		}
	}
	return names, nil
}

// resolveAuthors takes raw mentions, IDs and known names (a Korean name
// may carry a particle: 민수가) out of the question and returns them as
// user IDs.
func resolveAuthors(q string, names map[string][]int64) (string, []int64) {
	var ids []int64
	add := func(more ...int64) {
		for _, id := range more {
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	for _, m := range mentionRE.FindAllStringSubmatch(q, -1) {
		if id, err := strconv.ParseInt(m[1], 10, 64); err == nil {
			add(id)
		}
	}
	q = mentionRE.ReplaceAllString(q, " ")
	q = idRE.ReplaceAllString(q, " ")
	rest, named := search.NamesIn(q, names)
	add(named...)
	return rest, ids
}
