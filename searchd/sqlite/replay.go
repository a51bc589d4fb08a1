package sqlite

import (
	"fmt"

	"dsearch/searchd"
	"dsearch/searchd/segment"
)

// Segmentation is a function of a channel's messages in time order: each
// message is placed by what came before it (segment.Rules), never by what
// came after. A batch whose new messages all follow the channel's latest
// is placed as it stands. One that reaches back in time (a backfill page,
// an older export, a late event) re-segments the channel from its
// earliest new message on, placing old and new messages together in time
// order as an in-order import would, until the result provably agrees
// with what is stored (replay.converged); from there the stored segments
// stand, relabelled onto the re-made ones. Re-made segments get a new
// revision, so the embedding job re-embeds them.

// replayChunk is how many stored messages a re-segmentation reads at a time.
const replayChunk = 256

// placeFresh places the batch's new messages, one channel at a time.
func (a *applier) placeFresh() error {
	for i := 0; i < len(a.fresh); {
		j := i + 1
		for j < len(a.fresh) && a.fresh[j].ChannelID == a.fresh[i].ChannelID {
			j++
		}
		if err := a.placeChannel(a.fresh[i:j]); err != nil {
			return fmt.Errorf("channel %d: %w", a.fresh[i].ChannelID, err)
		}
		i = j
	}
	a.fresh = nil
	return nil
}

// placeChannel places one channel's new messages (in time order).
func (a *applier) placeChannel(fresh []*searchd.Message) error {
	first := fresh[0]
	l, ok := a.latest[first.ChannelID]
	if !ok {
		var err error
		if l, err = a.loadPlaced(qLatestMsg, first.ChannelID); err != nil {
			return err
		}
		a.latest[first.ChannelID] = l
	}
	if l == nil || before(l.at, l.id, first.CreatedAt, first.ID) {
		for _, m := range fresh {
			if err := a.place(m); err != nil {
				return fmt.Errorf("message %d: %w", m.ID, err)
			}
		}
		return nil
	}
	return a.resegment(fresh)
}

// replay is a re-segmentation in progress: where it started, and what it
// must know to tell when the stored segmentation from some message X on
// is what re-segmenting would make of it.
type replay struct {
	channel        int64
	fromAt, fromID int64 // the earliest new message; everything before it stands

	reach  int64 // how far back a placement can look: the reply window, the gap, the busy half hour
	near   int64 // how far back a placement looks except through replies
	window int   // spoken messages a busy channel's pace is read from

	lastNew     int64          // time of the latest new message
	fresh       map[int64]bool // the new messages' IDs
	replyUntil  int64          // time of the latest stored message replying to a new one
	spokenSince int            // old spoken messages placed since the latest new one
	oldStart    int64          // the stored segmentation's most recently started segment so far
	old         *oldMsg        // the stored message being placed again, nil for a new one

	// The window: messages of the last `reach` before X that both
	// segmentations hold, paired re-made segment ↔ stored segment.
	win          []pair
	byNew, byOld map[int64]map[int64]int
	bad          int // segments of the window paired with more than one

	moved map[int64]bool // segments whose members changed: recounted, re-embedded
	used  map[int64]bool // stored segments the replay placed messages in
}

type pair struct{ at, made, stored int64 }

// oldMsg is a stored message read back for placing again.
type oldMsg struct {
	m             searchd.Message
	seg, segStart int64 // its stored segment and that segment's first message
}

// resegment places fresh (one channel's new messages, some before its
// latest stored one) by replaying the channel from the first of them.
func (a *applier) resegment(fresh []*searchd.Message) (err error) {
	first, ch := fresh[0], fresh[0].ChannelID
	r := &replay{channel: ch, fromAt: first.CreatedAt, fromID: first.ID,
		reach:   max(a.rules.ReplyWindow, a.rules.Gap, a.rules.Horizon()).Microseconds(),
		near:    max(a.rules.Gap, a.rules.Horizon()).Microseconds(),
		lastNew: fresh[len(fresh)-1].CreatedAt, fresh: map[int64]bool{},
		byNew: map[int64]map[int64]int{}, byOld: map[int64]map[int64]int{},
		moved: map[int64]bool{}, used: map[int64]bool{}}
	if a.rules.Linker != nil {
		r.window = a.rules.Linker.Window
	}
	for _, m := range fresh {
		r.fresh[m.ID] = true
	}
	// Start from what an in-order import holds just before the first new
	// message: spans loaded from here on are cut back to it (restrict).
	a.replay = r
	defer func() {
		a.replay = nil
		delete(a.latest, ch) // the next use reads them back
		delete(a.current, ch)
		delete(a.recent, ch)
	}()
	if a.latest[ch], err = a.loadPlaced(qMsgBefore, ch, r.fromAt, r.fromAt, r.fromID); err != nil {
		return err
	}
	cur, err := a.loadSpan(qSpanBefore, ch, r.fromAt, r.fromAt, r.fromID)
	if err != nil {
		return err
	}
	a.current[ch] = cur
	if cur != nil {
		r.oldStart = cur.id
	}
	delete(a.recent, ch)
	if err := r.load(a); err != nil {
		return err
	}

	next := 0 // the next new message to place
	placeNew := func(o *oldMsg) error {
		for ; next < len(fresh) && (o == nil || before(fresh[next].CreatedAt, fresh[next].ID, o.m.CreatedAt, o.m.ID)); next++ {
			if err := a.place(fresh[next]); err != nil {
				return fmt.Errorf("message %d: %w", fresh[next].ID, err)
			}
		}
		return nil
	}
	afterAt, afterID := r.fromAt, r.fromID
	for {
		olds, err := a.loadOld(ch, afterAt, afterID)
		if err != nil {
			return err
		}
		for i := range olds {
			o := &olds[i]
			if err := placeNew(o); err != nil {
				return err
			}
			if next == len(fresh) && r.converged(a, o) {
				if err := r.relabel(a, o); err != nil {
					return err
				}
				return r.finish(a)
			}
			if _, err := a.exec(`DELETE FROM message_segments WHERE message_id = ?`, o.m.ID); err != nil {
				return err
			}
			r.old = o
			err := a.place(&o.m)
			r.old = nil
			if err != nil {
				return fmt.Errorf("message %d: %w", o.m.ID, err)
			}
		}
		if len(olds) < replayChunk {
			break
		}
		afterAt, afterID = olds[len(olds)-1].m.CreatedAt, olds[len(olds)-1].m.ID
	}
	if err := placeNew(nil); err != nil {
		return err
	}
	return r.finish(a)
}

// load reads what the replay needs before it starts: the segments of the
// messages within reach before the first new one, and the latest stored
// message that replies to a new one.
func (r *replay) load(a *applier) error {
	s, err := a.stmt(`SELECT m.created_at, ms.segment_id FROM messages m JOIN message_segments ms ON ms.message_id = m.id
		WHERE m.channel_id = ? AND m.created_at >= ? AND ` + beforeM + ` ORDER BY m.created_at, m.id`)
	if err != nil {
		return err
	}
	rows, err := s.QueryContext(a.ctx, r.channel, r.fromAt-r.reach, r.fromAt, r.fromAt, r.fromID)
	if err != nil {
		return err
	}
	for rows.Next() {
		var at, seg int64
		if err := rows.Scan(&at, &seg); err != nil {
			rows.Close()
			return err
		}
		r.add(at, seg, seg)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	s, err = a.stmt(`SELECT created_at, reply_to_id FROM messages
		WHERE channel_id = ? AND created_at >= ? AND created_at <= ? AND reply_to_id IS NOT NULL`)
	if err != nil {
		return err
	}
	rows, err = s.QueryContext(a.ctx, r.channel, r.fromAt, r.lastNew+a.rules.ReplyWindow.Microseconds())
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var at, to int64
		if err := rows.Scan(&at, &to); err != nil {
			return err
		}
		if r.fresh[to] {
			r.replyUntil = max(r.replyUntil, at)
		}
	}
	return rows.Err()
}

// loadOld reads the channel's next stored, placed messages after (at, id).
func (a *applier) loadOld(channel, at, id int64) ([]oldMsg, error) {
	s, err := a.stmt(`SELECT m.id, m.created_at, m.author_id, m.type, m.content, COALESCE(m.reply_to_id, 0), ms.segment_id, s.start_message_id,
			COALESCE((SELECT group_concat(mm.user_id) FROM message_mentions mm WHERE mm.message_id = m.id), '')
		FROM messages m JOIN message_segments ms ON ms.message_id = m.id JOIN segments s ON s.id = ms.segment_id
		WHERE m.channel_id = ? AND m.created_at >= ? AND (m.created_at > ? OR m.id > ?)
		ORDER BY m.created_at, m.id LIMIT ?`)
	if err != nil {
		return nil, err
	}
	rows, err := s.QueryContext(a.ctx, channel, at, at, id, replayChunk)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []oldMsg
	for rows.Next() {
		o := oldMsg{m: searchd.Message{ChannelID: channel}}
		var mentions string
		if err := rows.Scan(&o.m.ID, &o.m.CreatedAt, &o.m.Author.ID, &o.m.Type, &o.m.Content, &o.m.ReplyToID, &o.seg, &o.segStart, &mentions); err != nil {
			return nil, err
		}
		o.m.Mentions = splitIDs(mentions)
		out = append(out, o)
	}
	return out, rows.Err()
}

// placed follows a placement made during a replay.
func (r *replay) placed(m *searchd.Message, seg int64) error {
	if r == nil || m.ChannelID != r.channel {
		return nil
	}
	r.used[seg] = true
	if r.old == nil {
		r.spokenSince = 0
		r.moved[seg] = true
		return nil
	}
	if seg != r.old.seg {
		r.moved[seg], r.moved[r.old.seg] = true, true
	}
	if !segment.IsSystem(m.Type) {
		r.spokenSince++
	}
	if r.old.segStart == m.ID {
		r.oldStart = r.old.seg
	}
	r.add(m.CreatedAt, seg, r.old.seg)
	return nil
}

// add puts a message of both segmentations into the window.
func (r *replay) add(at, made, stored int64) {
	r.win = append(r.win, pair{at, made, stored})
	if link(r.byNew, made, stored) {
		r.bad++
	}
	if link(r.byOld, stored, made) {
		r.bad++
	}
}

// prune drops the window's messages from before `from`.
func (r *replay) prune(from int64) {
	n := 0
	for n < len(r.win) && r.win[n].at < from {
		p := r.win[n]
		if unlink(r.byNew, p.made, p.stored) {
			r.bad--
		}
		if unlink(r.byOld, p.stored, p.made) {
			r.bad--
		}
		n++
	}
	r.win = r.win[n:]
}

// link counts a pairing; it reports whether k just got a second partner.
func link(m map[int64]map[int64]int, k, v int64) bool {
	vs := m[k]
	if vs == nil {
		vs = map[int64]int{}
		m[k] = vs
	}
	vs[v]++
	return vs[v] == 1 && len(vs) == 2
}

// unlink uncounts a pairing; it reports whether k just lost its second
// partner.
func unlink(m map[int64]map[int64]int, k, v int64) bool {
	vs := m[k]
	if vs[v]--; vs[v] > 0 {
		return false
	}
	delete(vs, v)
	if len(vs) == 0 {
		delete(m, k)
	}
	return len(vs) == 1
}

// partner returns the one segment k is paired with, or 0.
func partner(m map[int64]map[int64]int, k int64) int64 {
	for v := range m[k] {
		return v
	}
	return 0
}

// converged reports whether, from the stored message x on, placing again
// would make what is stored (up to relabelling). A placement looks back
// through replies (the reply window), the segments of the last `near`
// (Rule 2, and a busy channel's addressees and authors), the busy
// window's spoken messages, and the most recently started segment. So it
// holds once the new messages are out of sight (more than `near` before
// x, no stored message from x on replies to one, and a busy window of
// spoken messages since), the window's messages are grouped alike by both
// (segments pair one to one), and the most recently started segments of
// both are partners, or both out of reach.
func (r *replay) converged(a *applier, x *oldMsg) bool {
	r.prune(x.m.CreatedAt - r.reach)
	if x.m.CreatedAt-r.lastNew <= r.near || x.m.CreatedAt <= r.replyUntil || r.spokenSince < r.window || r.bad > 0 {
		return false
	}
	var made int64
	if cur := a.current[r.channel]; cur != nil {
		made = cur.id
	}
	_, madeLive := r.byNew[made]
	_, storedLive := r.byOld[r.oldStart]
	return madeLive == storedLive && (!madeLive || partner(r.byNew, made) == r.oldStart)
}

// relabel moves the stored members from x on of each segment of the
// window onto its re-made partner, so they continue the conversations
// they continued before.
func (r *replay) relabel(a *applier, x *oldMsg) error {
	type move struct{ msg, seg int64 }
	var moves []move
	for stored := range r.byOld {
		to := partner(r.byOld, stored)
		if to == stored {
			continue
		}
		s, err := a.stmt(`SELECT m.id FROM message_segments ms JOIN messages m ON m.id = ms.message_id
			WHERE ms.segment_id = ? AND m.created_at >= ? AND (m.created_at > ? OR m.id >= ?)`)
		if err != nil {
			return err
		}
		rows, err := s.QueryContext(a.ctx, stored, x.m.CreatedAt, x.m.CreatedAt, x.m.ID)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			moves = append(moves, move{id, to})
			r.moved[stored], r.moved[to] = true, true
		}
		if err := rows.Close(); err != nil {
			return err
		}
	}
	// Read all, then write: a segment may be both a source and a target.
	for _, mv := range moves {
		if _, err := a.exec(`UPDATE message_segments SET segment_id = ? WHERE message_id = ?`, mv.seg, mv.msg); err != nil {
			return err
		}
	}
	return nil
}

// finish has every segment whose members changed recounted at flush (and
// dropped if none remain), which gives it a new revision to embed; a
// segment the replay made again as it was keeps its row, revision and
// vector.
func (r *replay) finish(a *applier) error {
	a.replay = nil
	for id := range r.moved {
		if _, ok := a.spans[id]; ok {
			continue
		}
		s, err := a.loadSpan(qSpan, id)
		if err != nil {
			return err
		}
		if s == nil {
			return fmt.Errorf("segment %d vanished", id)
		}
	}
	for id, s := range a.spans {
		if s.channel == r.channel {
			s.recount, s.dirty = r.moved[id], r.moved[id]
		}
	}
	return nil
}

// reuse returns the stored segment to give a stored message being placed
// again that starts a conversation: the one it started before, if nothing
// placed again uses it yet, so a conversation made again as it was keeps
// its row and vector. 0 means a new row.
func (r *replay) reuse(m *searchd.Message) int64 {
	if r == nil || r.old == nil || r.old.segStart != m.ID || r.used[r.old.seg] {
		return 0
	}
	return r.old.seg
}

// restrict cuts a span being loaded during a replay back to its members
// before the replay's start: the rest are being placed again.
func (r *replay) restrict(a *applier, s *span) error {
	if r == nil || s.channel != r.channel || before(s.endAt, s.endMsg, r.fromAt, r.fromID) {
		return nil
	}
	if !before(s.startAt, s.startMsg, r.fromAt, r.fromID) {
		return fmt.Errorf("segment %d starts after the re-segmentation point", s.id)
	}
	row, err := a.queryRow(`SELECT m.created_at, m.id FROM message_segments ms JOIN messages m ON m.id = ms.message_id
		WHERE ms.segment_id = ? AND `+beforeM+` ORDER BY m.created_at DESC, m.id DESC LIMIT 1`, s.id, r.fromAt, r.fromAt, r.fromID)
	if err != nil {
		return err
	}
	return row.Scan(&s.endAt, &s.endMsg)
}
