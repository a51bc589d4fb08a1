package bot

import (
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/diamondburned/arikawa/v3/discord"

	"dsearch/shared/api"
)

// marksFile keeps the high-water marks in the spool directory (its name
// does not end in .json: it is not a batch).
const marksFile = "sync-marks"

// marks are each channel's high-water mark: the newest message ID up to
// which every message of the channel is durably held, in searchd or in
// the spool. A catch-up starts at the mark, never at the newest message
// stored: a live message stored after a gap would hide the gap.
//
// So a live message moves its channel's mark only while the channel is
// whole in the current gateway session: caught up since the session
// began, and no event of it refused by the spool since. A new session
// (READY: the old one's missed events are gone) or a spool failure opens
// a gap that only a catch-up closes; RESUMED replays what was missed and
// keeps the channels whole.
type marks struct {
	path string

	mu      sync.Mutex
	through map[discord.ChannelID]discord.MessageID
	session uint64                       // counts gateway sessions
	wholeIn map[discord.ChannelID]uint64 // the session the channel was last caught up in
	gaps    map[discord.ChannelID]uint64 // counts the channel's gaps
	asked   map[discord.ChannelID]bool   // a catch-up was asked for a channel without a mark
	// lowered counts the channel's marks taken back (a restore of
	// searchd): a catch-up begun before must not move the mark again.
	lowered map[discord.ChannelID]uint64
	// generation is searchd's database the marks hold for (api.Health).
	generation string
	dirty      bool
}

// loadMarks reads the marks an earlier run saved in dir.
func loadMarks(dir string) (*marks, error) {
	// Temporary files of a write a crash cut short (writeFileAtomic).
	if left, err := filepath.Glob(filepath.Join(dir, ".*.tmp*")); err == nil {
		for _, p := range left {
			if b := filepath.Base(p); strings.HasPrefix(b, "."+marksFile+".tmp") || strings.HasPrefix(b, "."+api.BotStatusFile+".tmp") {
				os.Remove(p)
			}
		}
	}
	m, err := readMarks(dir)
	if err != nil {
		return nil, err
	}
	m.path = filepath.Join(dir, marksFile)
	return m, nil
}

// readMarks reads the marks saved in dir into marks kept in memory only
// (never saved): a full reconciliation's, which leaves the file to the
// bot that may run beside it.
func readMarks(dir string) (*marks, error) {
	m := &marks{through: map[discord.ChannelID]discord.MessageID{},
		wholeIn: map[discord.ChannelID]uint64{}, gaps: map[discord.ChannelID]uint64{}, asked: map[discord.ChannelID]bool{},
		lowered: map[discord.ChannelID]uint64{}, session: 1}
	data, err := os.ReadFile(filepath.Join(dir, marksFile))
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, err
	}
	var saved struct {
		Through    map[discord.ChannelID]discord.MessageID `json:"through"`
		Generation string                                  `json:"searchd_generation"`
	}
	if err := json.Unmarshal(data, &saved); err != nil {
		return nil, err
	}
	m.generation = saved.Generation
	for ch, id := range saved.Through {
		m.through[ch] = id
	}
	return m, nil
}

// newSession is a new gateway session: every channel has a gap.
func (m *marks) newSession() {
	m.mu.Lock()
	m.session++
	m.mu.Unlock()
}

// gap says a channel lost events: its mark stays until a catch-up.
func (m *marks) gap(ch discord.ChannelID) {
	m.mu.Lock()
	delete(m.wholeIn, ch)
	m.gaps[ch]++
	m.mu.Unlock()
}

// mark is where a channel's catch-up starts; ok is false for a channel
// the bot never synced.
func (m *marks) mark(ch discord.ChannelID) (id discord.MessageID, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	id, ok = m.through[ch]
	return id, ok
}

// spooled moves a channel's mark to a live message the spool took, if
// the channel is whole. It reports whether the channel needs a catch-up
// nothing has asked for yet: it has no mark (a thread the bot was just
// added to, a channel it was just allowed to read), so no catch-up of a
// guild covers it.
func (m *marks) spooled(ch discord.ChannelID, id discord.MessageID) (unsynced bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.wholeIn[ch]; ok && s == m.session {
		m.advance(ch, id)
		return false
	}
	return m.askLocked(ch)
}

// ask reports whether a channel has no mark and no catch-up asked for it
// yet, and notes one asked.
func (m *marks) ask(ch discord.ChannelID) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.askLocked(ch)
}

func (m *marks) askLocked(ch discord.ChannelID) bool {
	if _, ok := m.through[ch]; !ok && !m.asked[ch] {
		m.asked[ch] = true
		return true
	}
	return false
}

// fetched moves a channel's mark to the newest message of a page searchd
// took that runs on without a hole from the mark, unless the mark was
// taken back since the catch-up began (lower).
func (m *marks) fetched(c catchup, id discord.MessageID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lowered[c.ch] == c.lowered {
		m.advance(c.ch, id)
	}
}

// lower takes a channel's mark back to id (searchd restored from an older
// backup holds nothing after it), with a gap until a catch-up from there.
func (m *marks) lower(ch discord.ChannelID, id discord.MessageID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.through[ch]; ok && id < old {
		m.through[ch] = id
		m.lowered[ch]++
		m.dirty = true
	}
	delete(m.wholeIn, ch)
	m.gaps[ch]++
}

// all is every channel's mark.
func (m *marks) all() map[discord.ChannelID]discord.MessageID {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.through)
}

// searchdGeneration is searchd's database the marks hold for ("": not
// known yet); setGeneration records a new one.
func (m *marks) searchdGeneration() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.generation
}

func (m *marks) setGeneration(g string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.generation != g {
		m.generation, m.dirty = g, true
	}
}

func (m *marks) advance(ch discord.ChannelID, id discord.MessageID) {
	if old, ok := m.through[ch]; !ok || id > old {
		m.through[ch] = id
		m.dirty = true
	}
}

// catchup is a catch-up in progress: what it may close.
type catchup struct {
	ch                     discord.ChannelID
	session, gaps, lowered uint64
}

// begin starts a catch-up of a channel.
func (m *marks) begin(ch discord.ChannelID) catchup {
	m.mu.Lock()
	defer m.mu.Unlock()
	return catchup{ch, m.session, m.gaps[ch], m.lowered[ch]}
}

// finish makes the channel whole if nothing was lost since the catch-up
// began: every message after what it fetched arrives live. It reports
// whether it did.
func (m *marks) finish(c catchup) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.asked, c.ch)
	if c.session != m.session || c.gaps != m.gaps[c.ch] {
		return false
	}
	m.wholeIn[c.ch] = c.session
	return true
}

// forget drops a deleted channel's mark.
func (m *marks) forget(ch discord.ChannelID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.through[ch]; ok {
		delete(m.through, ch)
		m.dirty = true
	}
	delete(m.wholeIn, ch)
}

// save writes the marks if they moved. A mark may lag behind what is
// stored (the next catch-up fetches a little again), never run ahead: it
// is saved after what it covers is in the spool or in searchd.
func (m *marks) save() error {
	m.mu.Lock()
	if !m.dirty || m.path == "" {
		m.mu.Unlock()
		return nil
	}
	data, err := json.Marshal(map[string]any{"through": m.through, "searchd_generation": m.generation})
	m.dirty = false
	m.mu.Unlock()
	if err == nil {
		err = writeFileAtomic(m.path, data)
	}
	if err != nil {
		m.mu.Lock()
		m.dirty = true
		m.mu.Unlock()
	}
	return err
}

// writeFileAtomic replaces path with data so that a crash leaves either
// the old file or the new one, durably.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		err = d.Sync()
		d.Close()
		return err
	}
	return nil
}
