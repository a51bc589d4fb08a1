package lexical

// docTable finds a message's doc number by its ID: an open-addressing
// table (linear probing) of doc numbers whose keys are the docs' own IDs,
// 4 bytes a slot at most three quarters full, where a map[int64]uint32
// took 29 bytes an entry (18 MiB at 650,000 messages).
type docTable struct {
	slots []uint32 // doc number + 1; 0: empty
	shift uint     // 64 − log2(len(slots))
	n     int
}

// home is id's first slot: the top bits of a multiplicative hash.
func (t *docTable) home(id int64) int { return int(uint64(id) * 0x9E3779B97F4A7C15 >> t.shift) }

// find returns the slot holding id's doc number, or -1.
func (t *docTable) find(docs []doc, id int64) int {
	if t.n == 0 {
		return -1
	}
	mask := len(t.slots) - 1
	for i := t.home(id); ; i = (i + 1) & mask {
		switch s := t.slots[i]; {
		case s == 0:
			return -1
		case docs[s-1].id == id:
			return i
		}
	}
}

// get returns id's doc number.
func (t *docTable) get(docs []doc, id int64) (uint32, bool) {
	if i := t.find(docs, id); i >= 0 {
		return t.slots[i] - 1, true
	}
	return 0, false
}

// put adds doc n under its ID, which the table must not hold.
func (t *docTable) put(docs []doc, n uint32) {
	if (t.n+1)*4 > len(t.slots)*3 {
		t.resize(docs, max(1024, 2*len(t.slots)))
	}
	mask := len(t.slots) - 1
	i := t.home(docs[n].id)
	for t.slots[i] != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = n + 1
	t.n++
}

// remove takes id out of the table, moving back the entries that probed
// past its slot (no tombstones: a look-up stops at the first empty slot).
func (t *docTable) remove(docs []doc, id int64) {
	i := t.find(docs, id)
	if i < 0 {
		return
	}
	t.slots[i] = 0
	t.n--
	mask := len(t.slots) - 1
	for j := (i + 1) & mask; t.slots[j] != 0; j = (j + 1) & mask {
		k := t.home(docs[t.slots[j]-1].id)
		// An entry stays where it is if its home lies cyclically in (i, j].
		stays := k > i && k <= j
		if j < i {
			stays = k > i || k <= j
		}
		if !stays {
			t.slots[i], t.slots[j] = t.slots[j], 0
			i = j
		}
	}
}

// resize rehashes the table into size slots (a power of two).
func (t *docTable) resize(docs []doc, size int) {
	old := t.slots
	t.slots, t.n = make([]uint32, size), 0
	t.shift = 64
	for s := size; s > 1; s >>= 1 {
		t.shift--
	}
	for _, s := range old {
		if s != 0 {
			t.put(docs, s-1)
		}
	}
}

// rebuild makes the table hold every doc of docs not marked dead.
func (t *docTable) rebuild(docs []doc, dead bitset) {
	size := 1024
	for size*3 < len(docs)*4 {
		size *= 2
	}
	*t = docTable{}
	t.resize(docs, size)
	for n := range docs {
		if !dead.has(uint32(n)) {
			t.put(docs, uint32(n))
		}
	}
}
