package index

import (
	"cmp"
	"context"
	"log/slog"
	"runtime/debug"
	"time"

	"dsearch/searchd/lexical"
	"dsearch/searchd/sqlite"
)

// Keywords keeps an in-memory keyword index (lexical.Index) current with
// the database. Load reads every message; afterwards each use applies the
// messages changed since (sqlite's text_changes log, which imports write
// too). A backlog of more than MaxCatchUp changes, or a bump of the text
// epoch (what imports did before they logged their messages), makes it
// load again in the background instead. While it loads,
// Current returns nil and keyword search runs on FTS5.
type Keywords struct {
	DB  *sqlite.DB
	Log *slog.Logger
	// MaxCatchUp is the most changes a search applies before it runs;
	// 0 means DefaultMaxCatchUp.
	MaxCatchUp int64

	follower[lexical.Index]
	state sqlite.TextState // what the index holds; under mu
}

// Load builds the index from every stored message.
func (k *Keywords) Load(ctx context.Context) error {
	start := time.Now()
	idx := lexical.NewIndex()
	st, err := k.DB.ScanTexts(ctx, idx.Put)
	if err != nil {
		return err
	}
	idx.Trim()
	k.mu.Lock()
	k.state = st
	k.ready.Store(idx)
	k.mu.Unlock()
	debug.FreeOSMemory() // loading's garbage was most of the heap
	if k.Log != nil {
		k.Log.Info("keyword index loaded", "messages", idx.Len(), "took", time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// DefaultMaxCatchUp: an import's batch (5,000 messages) is applied in
// tens of milliseconds; the first import into an empty database, or a
// daemon that was down through an import, is a reload's work.
const DefaultMaxCatchUp = 20_000

// Len is the number of messages in the index (0 while loading).
func (k *Keywords) Len() int {
	if idx := k.ready.Load(); idx != nil {
		return idx.Len()
	}
	return 0
}

// Current returns the index with every change so far applied, or nil
// when it is (re)loading.
func (k *Keywords) Current(ctx context.Context) (*lexical.Index, error) {
	st, err := k.DB.TextState(ctx)
	if err != nil {
		return nil, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	idx := k.ready.Load()
	switch {
	case idx == nil:
		return nil, nil
	case st.Epoch != k.state.Epoch:
		k.reload()
		return nil, nil
	case st.Version == k.state.Version:
		return idx, nil
	case st.Seq-k.state.Seq > cmp.Or(k.MaxCatchUp, DefaultMaxCatchUp):
		k.reload()
		return nil, nil
	}
	changed, deleted, upTo, err := k.DB.TextChanges(ctx, k.state.Seq)
	if err != nil {
		return nil, err
	}
	for _, d := range changed {
		idx.Put(d)
	}
	for _, id := range deleted {
		idx.Delete(id)
	}
	k.state.Seq, k.state.Version = upTo, st.Version
	return idx, nil
}

// reload loads the index again in the background, once at a time; k.mu
// is held. FTS5 serves until the new index is ready.
func (k *Keywords) reload() {
	k.follower.reload(k.Load, k.Log, "keyword index: reload failed; keyword search stays on FTS5")
}

// Run loads the index, then keeps it current and trims the change log
// every interval until ctx ends.
func (k *Keywords) Run(ctx context.Context, interval time.Duration) error {
	return run(ctx, k, interval, k.Log, "keyword index: cannot trim the change log")
}

func (k *Keywords) current(ctx context.Context) bool {
	idx, err := k.Current(ctx)
	return err == nil && idx != nil
}

func (k *Keywords) applied() int64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.state.Seq
}

func (k *Keywords) trim(ctx context.Context, seq int64) error { return k.DB.TrimTextChanges(ctx, seq) }
