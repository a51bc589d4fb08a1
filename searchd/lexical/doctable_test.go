package lexical

import (
	"math/rand/v2"
	"testing"
)

// The table finds what a map would, through puts, removals (which move
// entries back along their probes) and growth, with IDs that collide in
// their home slots.
func TestDocTableMatchesMap(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	var docs []doc
	var dead bitset
	var table docTable
	want := map[int64]uint32{}
	for step := range 200_000 {
		id := int64(r.IntN(5000))
		if step%3 == 0 {
			id <<= 40 // the same low bits: neighbours in a weak hash
		}
		if n, ok := want[id]; ok && r.IntN(2) == 0 {
			table.remove(docs, id)
			delete(want, id)
			dead.set(n)
			continue
		}
		if n, ok := want[id]; ok {
			table.remove(docs, id)
			dead.set(n)
		}
		docs = append(docs, doc{id: id})
		dead.grow(len(docs))
		n := uint32(len(docs) - 1)
		table.put(docs, n)
		want[id] = n
		if step%50_000 == 49_999 {
			table.rebuild(docs, dead)
		}
	}
	if table.n != len(want) {
		t.Fatalf("table holds %d, map %d", table.n, len(want))
	}
	for id := range int64(5000) {
		for _, key := range []int64{id, id << 40} {
			n, ok := table.get(docs, key)
			if m, has := want[key]; ok != has || ok && n != m {
				t.Fatalf("id %d: table %d %v, map %d %v", key, n, ok, m, has)
			}
		}
	}
}

// Removals where a probe wraps from the last slot to the first: IDs whose
// home is one of the last slots, among others, removed in random order.
func TestDocTableRemovesAcrossTheEnd(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 1))
	var docs []doc
	var table docTable
	table.resize(docs, 1024)
	var ids []int64
	for id := int64(1); len(ids) < 40; id++ {
		if table.home(id) >= 1021 {
			ids = append(ids, id)
		}
	}
	for len(ids) < 700 {
		ids = append(ids, r.Int64())
	}
	for _, id := range ids {
		docs = append(docs, doc{id: id})
		table.put(docs, uint32(len(docs)-1))
	}
	if len(table.slots) != 1024 {
		t.Fatalf("the table grew to %d slots", len(table.slots))
	}
	r.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	for k, id := range ids {
		table.remove(docs, id)
		for _, rest := range ids[k+1:] {
			if _, ok := table.get(docs, rest); !ok {
				t.Fatalf("after removing %d of %d, %d is lost", k+1, len(ids), rest)
			}
		}
		if _, ok := table.get(docs, id); ok {
			t.Fatalf("%d is still found", id)
		}
	}
}
