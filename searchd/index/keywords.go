package index

import (
	"cmp"
	"context"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
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

	ready     atomic.Pointer[lexical.Index]
	reloading atomic.Bool
	mu        sync.Mutex // one catch-up at a time
	state     sqlite.TextState
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
// is held.
func (k *Keywords) reload() {
	if !k.reloading.CompareAndSwap(false, true) {
		return
	}
	// FTS5 serves until the new index is ready: let the old one go
	// now, rather than hold two in memory while the new one loads.
	k.ready.Store(nil)
	go func() {
		defer k.reloading.Store(false)
		if err := k.Load(context.Background()); err != nil && k.Log != nil {
			k.Log.Error("keyword index: reload failed; keyword search stays on FTS5", "err", err)
		}
	}()
}

// Run loads the index, then keeps it current and trims the change log
// every interval until ctx ends.
func (k *Keywords) Run(ctx context.Context, interval time.Duration) error {
	if err := k.Load(ctx); err != nil {
		return err
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if idx, err := k.Current(ctx); err != nil || idx == nil {
			continue // reloading, or the database is busy: next time
		}
		k.mu.Lock()
		seq := k.state.Seq
		k.mu.Unlock()
		if err := k.DB.TrimTextChanges(ctx, seq); err != nil && k.Log != nil {
			k.Log.Warn("keyword index: cannot trim the change log", "err", err)
		}
	}
}
