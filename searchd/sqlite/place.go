package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"dsearch/searchd"
	"dsearch/searchd/segment"
)

// span is a segment as the applier keeps it while a transaction runs.
type span struct {
	id, channel      int64
	startAt, endAt   int64
	startMsg, endMsg int64
	count            int64
	dirty, recount   bool
}

// placed is a message placed during this transaction, for replies to it.
type placed struct{ channel, at, id, segment int64 }

// before reports whether a message (at, id) comes before (at2, id2) in a
// channel's time order: by time, then by ID, as an in-order import
// places them.
func before(at, id, at2, id2 int64) bool {
	return at < at2 || at == at2 && id < id2
}

// beforeM restricts a query on messages m to those before a message in
// time order (arguments: at, at, id); the first term lets the
// (channel, created_at, id) indexes bound the scan.
const beforeM = `m.created_at <= ? AND (m.created_at < ? OR m.id < ?)`

const (
	qMember     = `INSERT INTO message_segments (message_id, segment_id) VALUES (?, ?)`
	qLatestMsg  = `SELECT m.channel_id, m.created_at, m.id, ms.segment_id FROM messages m JOIN message_segments ms ON ms.message_id = m.id WHERE m.channel_id = ? ORDER BY m.created_at DESC, m.id DESC LIMIT 1`
	qMsgBefore  = `SELECT m.channel_id, m.created_at, m.id, ms.segment_id FROM messages m JOIN message_segments ms ON ms.message_id = m.id WHERE m.channel_id = ? AND ` + beforeM + ` ORDER BY m.created_at DESC, m.id DESC LIMIT 1`
	qParent     = `SELECT m.channel_id, m.created_at, m.id, ms.segment_id FROM messages m JOIN message_segments ms ON ms.message_id = m.id WHERE m.id = ?`
	qSpan       = `SELECT id, channel_id, start_at, end_at, start_message_id, end_message_id, message_count FROM segments WHERE id = ?`
	qLatestSpan = `SELECT id, channel_id, start_at, end_at, start_message_id, end_message_id, message_count FROM segments WHERE channel_id = ? ORDER BY start_at DESC, start_message_id DESC LIMIT 1`
	qSpanAt     = `SELECT id, channel_id, start_at, end_at, start_message_id, end_message_id, message_count FROM segments WHERE channel_id = ? AND start_at <= ? ORDER BY start_at DESC, start_message_id DESC LIMIT 1`
	qSpanBefore = `SELECT id, channel_id, start_at, end_at, start_message_id, end_message_id, message_count FROM segments WHERE channel_id = ? AND start_at <= ? AND (start_at < ? OR start_message_id < ?) ORDER BY start_at DESC, start_message_id DESC LIMIT 1`
	qNewSpan    = `INSERT INTO segments (id, channel_id, start_message_id, end_message_id, start_at, end_at, message_count, revision) VALUES ((SELECT CAST(value AS INTEGER) + 1 FROM meta WHERE key = 'segments_high'), ?, ?, ?, ?, ?, 0, 0)` // never a deleted segment's ID (migration 0016)
	qUpdateSpan = `UPDATE segments SET start_message_id = ?, end_message_id = ?, start_at = ?, end_at = ?, message_count = ?, revision = revision + 1 WHERE id = ?`
)

// Placement says why a message joined its segment.
type Placement struct {
	// Kind: "reply" (a Discord reply within the reply window joins its
	// parent's conversation), "link" (the linker's chosen parent), "new"
	// (it starts a conversation), "system" (a join or a pin stands alone),
	// "time" (the blog's rules, without a linker).
	Kind     string
	ParentID int64 // reply and link
	// Segment is where the decision leads (0: a conversation of its own),
	// from Placements: what is stored differs where the history before
	// the message, or the segmenter, changed since it was placed.
	Segment int64
	// The linker's scores: the chosen option's, starting a
	// conversation's, the best candidate's (-Inf: there was none), and
	// the chosen option's probability.
	Score, NewScore, BestLink, Prob float64
	Candidates                      int
	// Dialogue: in a small group, a line that does not change the subject
	// links to one of its candidates (segment.SmallGroup).
	Dialogue bool
}

// decide chooses m's segment (0: a new one) and says why; line is m as
// the linker saw it, nil where it did not look.
func (a *applier) decide(m *searchd.Message) (int64, Placement, *segment.Line, error) {
	parent, err := a.parent(m)
	if err != nil {
		return 0, Placement{}, nil, err
	}
	switch {
	case parent != nil && a.rules.Replies(m.CreatedAt, parent.CreatedAt):
		return parent.SegmentID, Placement{Kind: "reply", ParentID: m.ReplyToID}, nil, nil
	case a.rules.Linker == nil:
		cur, err := a.currentAt(m.ChannelID, m.CreatedAt)
		if err != nil {
			return 0, Placement{}, nil, err
		}
		prev, err := a.previousAt(m)
		if err != nil {
			return 0, Placement{}, nil, err
		}
		return a.rules.Place(m.CreatedAt, nil, cur.public(), prev.public()), Placement{Kind: "time"}, nil, nil
	case segment.IsSystem(m.Type):
		return 0, Placement{Kind: "system"}, nil, nil // a join or a pin is nobody's conversation
	}
	line, cands, c, err := a.link(m)
	if err != nil {
		return 0, Placement{}, nil, err
	}
	p := Placement{Kind: "new", Score: c.Score, NewScore: c.NewScore, BestLink: c.BestLink, Prob: c.Prob,
		Candidates: len(cands), Dialogue: c.Dialogue}
	if c.Parent < 0 {
		return 0, p, line, nil
	}
	p.Kind, p.ParentID = "link", cands[c.Parent].ID
	return cands[c.Parent].Segment, p, line, nil
}

// place puts a new message into a segment: a reply within the reply
// window joins its parent's (Rule 1); with a linker, a system message
// stands alone and a spoken one joins its reply link's conversation or
// starts one; without, the blog's time rules decide.
func (a *applier) place(m *searchd.Message) error {
	id, _, line, err := a.decide(m)
	if err != nil {
		return err
	}
	var s *span
	if id != 0 {
		if s, err = a.span(id); err != nil {
			return err
		}
	} else if s, err = a.newSpan(m); err != nil {
		return err
	}
	if _, err := a.exec(qMember, m.ID, s.id); err != nil {
		return err
	}
	a.joined = append(a.joined, m.ID) // the only new memberships: logged here (logMemberships)
	s.count++
	if s.count == 1 || m.CreatedAt < s.startAt || (m.CreatedAt == s.startAt && m.ID < s.startMsg) {
		s.startAt, s.startMsg = m.CreatedAt, m.ID
	}
	if s.count == 1 || m.CreatedAt > s.endAt || (m.CreatedAt == s.endAt && m.ID > s.endMsg) {
		s.endAt, s.endMsg = m.CreatedAt, m.ID
	}
	s.dirty = true
	p := placed{m.ChannelID, m.CreatedAt, m.ID, s.id}
	a.placed[m.ID] = p
	if a.rules.Linker != nil && !segment.IsSystem(m.Type) {
		if err := a.noteRecent(m, line, s.id); err != nil {
			return err
		}
	}
	if l := a.latest[m.ChannelID]; l == nil || !before(m.CreatedAt, m.ID, l.at, l.id) {
		a.latest[m.ChannelID] = &p
	}
	return a.replay.placed(m, s.id)
}

const spoken = `m.type IN ` + spokenTypes

// link asks the linker for m's parent among the channel's latest spoken
// lines before it.
func (a *applier) link(m *searchd.Message) (*segment.Line, []segment.Line, segment.Choice, error) {
	window, err := a.window(m)
	if err != nil {
		return nil, nil, segment.Choice{}, err
	}
	line, err := a.line(m)
	if err != nil {
		return nil, nil, segment.Choice{}, err
	}
	cands := a.rules.Linker.Candidates(line, window)
	if a.explain {
		return line, cands, a.rules.Linker.Explain(line, cands), nil
	}
	return line, cands, a.rules.Linker.Choose(line, cands), nil
}

// line describes m for the linker.
func (a *applier) line(m *searchd.Message) (*segment.Line, error) {
	guild, err := a.guildOf(m.ChannelID)
	if err != nil {
		return nil, err
	}
	name, err := a.nameOf(member{guild, m.Author.ID})
	if err != nil {
		return nil, err
	}
	l := segment.NewLine(m.ID, m.CreatedAt, m.Author.ID, name, m.Content, m.Mentions)
	return &l, nil
}

// member is a user in a server (0: a channel of no known server).
type member struct{ guild, user int64 }

// nameOf returns the name a member goes by now (memberName): the same
// whether a line is read back or followed in memory.
func (a *applier) nameOf(who member) (string, error) {
	if n, ok := a.names[who]; ok {
		return n, nil
	}
	row, err := a.queryRow(`SELECT COALESCE(NULLIF((SELECT nickname FROM server_nicknames WHERE guild_id = ? AND user_id = u.id), ''),
		NULLIF(u.display_name, ''), u.name) FROM users u WHERE u.id = ?`, who.guild, who.user)
	if err != nil {
		return "", err
	}
	var n string
	if err := row.Scan(&n); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", err
	}
	a.names[who] = n
	return n, nil
}

// guildOf is a channel's server (0: none known), read once a batch.
func (a *applier) guildOf(channel int64) (int64, error) {
	if g, ok := a.guilds[channel]; ok {
		return g, nil
	}
	row, err := a.queryRow(`SELECT COALESCE(guild_id, 0) FROM channels WHERE id = ?`, channel)
	if err != nil {
		return 0, err
	}
	var g int64
	if err := row.Scan(&g); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, err
	}
	a.guilds[channel] = g
	return g, nil
}

// window returns m's channel's latest spoken lines before m, oldest
// first, with their segments: read once per channel and transaction,
// then followed as messages are placed in time order.
func (a *applier) window(m *searchd.Message) ([]segment.Line, error) {
	w, ok := a.recent[m.ChannelID]
	if ok && (len(w) == 0 || before(w[len(w)-1].At, w[len(w)-1].ID, m.CreatedAt, m.ID)) {
		return w, nil
	}
	w, err := a.loadWindow(m)
	if err != nil {
		return nil, err
	}
	if !ok {
		a.recent[m.ChannelID] = w
	}
	return w, nil
}

// noteRecent adds a placed spoken message to its channel's window.
func (a *applier) noteRecent(m *searchd.Message, line *segment.Line, seg int64) error {
	w, ok := a.recent[m.ChannelID]
	if !ok || (len(w) > 0 && !before(w[len(w)-1].At, w[len(w)-1].ID, m.CreatedAt, m.ID)) {
		return nil
	}
	if line == nil {
		var err error
		if line, err = a.line(m); err != nil {
			return err
		}
	}
	l := *line
	l.Segment = seg
	w = append(w, l)
	if n := len(w) - a.rules.Linker.Window; n > a.rules.Linker.Window {
		w = slices.Clone(w[n:]) // keep memory bounded without copying on every line
	}
	a.recent[m.ChannelID] = w
	return nil
}

func (a *applier) loadWindow(m *searchd.Message) ([]segment.Line, error) {
	s, err := a.stmt(`SELECT m.id, COALESCE(c.guild_id, 0), m.created_at, m.author_id, ` + memberName + `, m.content, ms.segment_id,
			COALESCE((SELECT group_concat(mm.user_id) FROM message_mentions mm WHERE mm.message_id = m.id), '')
		FROM messages m JOIN message_segments ms ON ms.message_id = m.id JOIN users u ON u.id = m.author_id
		JOIN channels c ON c.id = m.channel_id` + joinNickname + `
		WHERE m.channel_id = ? AND ` + beforeM + ` AND ` + spoken + `
		ORDER BY m.created_at DESC, m.id DESC LIMIT ?`)
	if err != nil {
		return nil, err
	}
	rows, err := s.QueryContext(a.ctx, m.ChannelID, m.CreatedAt, m.CreatedAt, m.ID, a.rules.Linker.Window)
	if err != nil {
		return nil, err
	}
	type row struct {
		id, guild, at, author, seg int64
		name, content, mentions    string
	}
	var got []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.guild, &r.at, &r.author, &r.name, &r.content, &r.seg, &r.mentions); err != nil {
			rows.Close()
			return nil, err
		}
		got = append(got, r)
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	w := make([]segment.Line, 0, len(got))
	for i := len(got) - 1; i >= 0; i-- {
		r := got[i]
		a.names[member{r.guild, r.author}] = r.name
		l := segment.NewLine(r.id, r.at, r.author, r.name, r.content, splitIDs(r.mentions))
		l.Segment = r.seg
		w = append(w, l)
	}
	return w, nil
}

func splitIDs(s string) []int64 {
	var out []int64
	for _, f := range strings.Split(s, ",") {
		if u, err := strconv.ParseInt(f, 10, 64); err == nil {
			out = append(out, u)
		}
	}
	return out
}

func (s *span) public() *segment.Span {
	if s == nil {
		return nil
	}
	return &segment.Span{ID: s.id, StartAt: s.startAt, EndAt: s.endAt}
}

// previousAt returns the segment of the channel's latest placed message
// before m.
func (a *applier) previousAt(m *searchd.Message) (*span, error) {
	l, ok := a.latest[m.ChannelID]
	if !ok {
		var err error
		if l, err = a.loadPlaced(qLatestMsg, m.ChannelID); err != nil {
			return nil, err
		}
		a.latest[m.ChannelID] = l
	}
	if l != nil && !before(l.at, l.id, m.CreatedAt, m.ID) {
		var err error
		if l, err = a.loadPlaced(qMsgBefore, m.ChannelID, m.CreatedAt, m.CreatedAt, m.ID); err != nil {
			return nil, err
		}
	}
	if l == nil {
		return nil, nil
	}
	return a.span(l.segment)
}

func (a *applier) loadPlaced(q string, args ...any) (*placed, error) {
	row, err := a.queryRow(q, args...)
	if err != nil {
		return nil, err
	}
	var p placed
	switch err := row.Scan(&p.channel, &p.at, &p.id, &p.segment); {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return &p, nil
}

// parent finds a reply's parent in the same channel, if it is stored.
func (a *applier) parent(m *searchd.Message) (*segment.Parent, error) {
	if m.ReplyToID == 0 {
		return nil, nil
	}
	p, ok := a.placed[m.ReplyToID]
	if !ok {
		found, err := a.loadPlaced(qParent, m.ReplyToID)
		if err != nil || found == nil {
			return nil, err
		}
		p = *found
	}
	if p.channel != m.ChannelID {
		return nil, nil // a reply across channels does not merge conversations
	}
	if !before(p.at, p.id, m.CreatedAt, m.ID) {
		return nil, nil // placed later in time order: an in-order import would not know it yet
	}
	return &segment.Parent{CreatedAt: p.at, SegmentID: p.segment}, nil
}

// currentAt returns the channel's most recently started segment at or
// before `at`: its current conversation, for messages arriving in order.
func (a *applier) currentAt(channel, at int64) (*span, error) {
	cur, ok := a.current[channel]
	if !ok {
		var err error
		if cur, err = a.loadSpan(qLatestSpan, channel); err != nil {
			return nil, err
		}
		a.current[channel] = cur
	}
	if cur == nil || cur.startAt <= at {
		return cur, nil
	}
	// An older message than the channel's current conversation (an export
	// imported out of order): ask the database, brought up to date first.
	if err := a.flush(); err != nil {
		return nil, err
	}
	return a.loadSpan(qSpanAt, channel, at)
}

// span returns a segment by ID, from this transaction's cache or the
// database.
func (a *applier) span(id int64) (*span, error) {
	if s, ok := a.spans[id]; ok {
		return s, nil
	}
	s, err := a.loadSpan(qSpan, id)
	if err == nil && s == nil {
		err = fmt.Errorf("segment %d vanished", id)
	}
	return s, err
}

func (a *applier) loadSpan(q string, args ...any) (*span, error) {
	row, err := a.queryRow(q, args...)
	if err != nil {
		return nil, err
	}
	var s span
	switch err := row.Scan(&s.id, &s.channel, &s.startAt, &s.endAt, &s.startMsg, &s.endMsg, &s.count); {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, err
	}
	if cached, ok := a.spans[s.id]; ok {
		return cached, nil // ours is newer than the row, or equal
	}
	if err := a.replay.restrict(a, &s); err != nil {
		return nil, err
	}
	a.spans[s.id] = &s
	return &s, nil
}

func (a *applier) newSpan(m *searchd.Message) (*span, error) {
	s := &span{channel: m.ChannelID, startAt: m.CreatedAt, endAt: m.CreatedAt, startMsg: m.ID, endMsg: m.ID}
	if s.id = a.replay.reuse(m); s.id == 0 {
		// Not RETURNING id: in this SQLite it cost 35 µs a row against 8
		// µs for the insert and its row ID, about 3 µs an imported message.
		r, err := a.exec(qNewSpan, m.ChannelID, m.ID, m.ID, m.CreatedAt, m.CreatedAt)
		if err != nil {
			return nil, err
		}
		if s.id, err = r.LastInsertId(); err != nil {
			return nil, err
		}
	}
	a.spans[s.id] = s
	if cur := a.current[m.ChannelID]; cur == nil || s.startAt >= cur.startAt {
		a.current[m.ChannelID] = s
	}
	return s, nil
}

// flush writes changed segments back. A segment that lost members is
// recomputed from what remains, and removed when nothing does; what was
// derived from its text goes (dropDerived).
func (a *applier) flush() error {
	for id, s := range a.spans {
		if s.recount {
			if err := a.recount(s); err != nil {
				return err
			}
			if err := a.dropDerived(`?`, id); err != nil {
				return err
			}
			s.recount, s.dirty = false, true
			if s.count == 0 {
				if _, err := a.exec(`DELETE FROM segments WHERE id = ?`, id); err != nil {
					return err
				}
				delete(a.spans, id)
				if a.current[s.channel] == s {
					delete(a.current, s.channel) // reload on next use
				}
				continue
			}
		}
		if s.dirty {
			if _, err := a.exec(qUpdateSpan, s.startMsg, s.endMsg, s.startAt, s.endAt, s.count, id); err != nil {
				return err
			}
			s.dirty = false
		}
	}
	return nil
}

func (a *applier) recount(s *span) error {
	row, err := a.queryRow(`SELECT COUNT(*) FROM message_segments WHERE segment_id = ?`, s.id)
	if err != nil {
		return err
	}
	if err := row.Scan(&s.count); err != nil || s.count == 0 {
		return err
	}
	const ends = `SELECT m.id, m.created_at FROM message_segments ms JOIN messages m ON m.id = ms.message_id
		WHERE ms.segment_id = ? ORDER BY m.created_at %s, m.id %s LIMIT 1`
	if row, err = a.queryRow(fmt.Sprintf(ends, "ASC", "ASC"), s.id); err != nil {
		return err
	}
	if err := row.Scan(&s.startMsg, &s.startAt); err != nil {
		return err
	}
	if row, err = a.queryRow(fmt.Sprintf(ends, "DESC", "DESC"), s.id); err != nil {
		return err
	}
	return row.Scan(&s.endMsg, &s.endAt)
}

// Placements says why each given message is in its segment, by deciding
// again where it goes from what is stored before it: the same decision as
// when it was placed, unless history before it changed since.
func (db *DB) Placements(ctx context.Context, rules segment.Rules, ids []int64) (map[int64]Placement, error) {
	tx, err := db.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	a, err := newApplier(ctx, db, tx, rules, 0)
	if err != nil {
		return nil, err
	}
	defer a.close()
	a.explain = true
	out := map[int64]Placement{}
	for _, id := range ids {
		m := searchd.Message{ID: id}
		var mentions string
		err := tx.QueryRowContext(ctx, `SELECT m.channel_id, m.author_id, m.created_at, m.content, m.type, COALESCE(m.reply_to_id, 0),
				COALESCE((SELECT group_concat(mm.user_id) FROM message_mentions mm WHERE mm.message_id = m.id), '')
			FROM messages m WHERE m.id = ?`, id).
			Scan(&m.ChannelID, &m.Author.ID, &m.CreatedAt, &m.Content, &m.Type, &m.ReplyToID, &mentions)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, err
		}
		m.Mentions = splitIDs(mentions)
		clear(a.recent) // each message's own window, read from what is stored
		clear(a.latest)
		clear(a.current)
		seg, p, _, err := a.decide(&m)
		if err != nil {
			return nil, fmt.Errorf("message %d: %w", id, err)
		}
		p.Segment = seg
		out[id] = p
	}
	return out, nil
}
