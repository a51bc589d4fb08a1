package lexical

import "slices"

// Holding appends to ids the live messages that hold every term of at
// least one of alts (a Query's Required) and that f admits, unranked: the
// messages Search would rank. A message holding several alternatives
// comes once for each.
func (x *Index) Holding(alts [][]Term, f Filter, ids []int64) []int64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	a := x.admits(f)
	for _, alt := range alts {
		if len(alt) == 0 {
			continue
		}
		lists := make([]*cursor, len(alt))
		for i, t := range alt {
			l, _ := x.match(t)
			lists[i] = newCursor(l)
		}
		// Walk the rarest list and look the message up in the others.
		slices.SortFunc(lists, func(a, b *cursor) int { return len(a.ps) - len(b.ps) })
	postings:
		for _, p := range lists[0].ps {
			if x.dead.has(p.doc) || a != nil && !a.ok(x.meta[p.doc]) {
				continue
			}
			for _, c := range lists[1:] {
				if c.seek(p.doc); c.done() || c.doc() != p.doc {
					continue postings
				}
			}
			ids = append(ids, x.docs[p.doc].id)
		}
	}
	return ids
}

// Admitted appends to ids the live messages f admits: Holding without
// terms (every live message when f is empty).
func (x *Index) Admitted(f Filter, ids []int64) []int64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	a := x.admits(f)
	for n := range x.docs {
		if x.dead.has(uint32(n)) || a != nil && !a.ok(x.meta[n]) {
			continue
		}
		ids = append(ids, x.docs[n].id)
	}
	return ids
}
