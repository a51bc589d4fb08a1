// The applier's rows: guilds and channels, authors and their names,
// messages stored, edited and deleted, and what was derived from a
// changed segment's text.

package sqlite

import (
	"cmp"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"dsearch/searchd"
	"dsearch/shared/api"
)

// upsertPlaces writes guilds and channels, never replacing a known name
// with an empty one, and makes a placeholder row for any channel a message
// names that the batch does not describe.
func (a *applier) upsertPlaces(b *searchd.Batch) error {
	for _, g := range b.Guilds {
		q := `INSERT INTO guilds (id, name) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET name = COALESCE(NULLIF(excluded.name, ''), name)`
		if a.olderGuild { // an older export's name is the guild's old name
			q = `INSERT INTO guilds (id, name) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET name = COALESCE(NULLIF(name, ''), excluded.name)`
		}
		if _, err := a.exec(q, g.ID, g.Name); err != nil {
			return fmt.Errorf("guild %d: %w", g.ID, err)
		}
	}
	for _, c := range b.Channels {
		if c.GuildID != 0 {
			if _, err := a.exec(`INSERT INTO guilds (id) VALUES (?) ON CONFLICT DO NOTHING`, c.GuildID); err != nil {
				return err
			}
		}
		q := `INSERT INTO channels (id, guild_id, parent_id, name, kind, topic) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET
				guild_id = COALESCE(excluded.guild_id, guild_id),
				parent_id = COALESCE(excluded.parent_id, parent_id),
				name = COALESCE(NULLIF(excluded.name, ''), name),
				kind = COALESCE(NULLIF(excluded.kind, ''), kind),
				topic = COALESCE(NULLIF(excluded.topic, ''), topic)`
		if a.olderNames[c.ID] {
			q = strings.NewReplacer("COALESCE(NULLIF(excluded.name, ''), name)", "COALESCE(NULLIF(name, ''), excluded.name)",
				"COALESCE(NULLIF(excluded.topic, ''), topic)", "COALESCE(NULLIF(topic, ''), excluded.topic)").Replace(q)
		}
		if _, err := a.exec(q,
			c.ID, nullID(c.GuildID), nullID(c.ParentID), c.Name, c.Kind, c.Topic); err != nil {
			return fmt.Errorf("channel %d: %w", c.ID, err)
		}
	}
	seen := map[int64]bool{}
	for _, m := range b.Messages {
		if !seen[m.ChannelID] {
			seen[m.ChannelID] = true
			if _, err := a.exec(`INSERT INTO channels (id) VALUES (?) ON CONFLICT DO NOTHING`, m.ChannelID); err != nil {
				return err
			}
		}
	}
	return nil
}

// upsertAuthors records each author and every name they were seen under in
// the batch, with the first and last time of each: the alias dictionary's
// raw material, keyed by the unchanging user ID.
func (a *applier) upsertAuthors(msgs []searchd.Message) error {
	type nameKey struct {
		user, guild int64 // guild: a nickname's server; 0 for the others
		kind, name  string
	}
	type seenSpan struct{ first, last int64 }
	latest := map[int64]*searchd.Message{}
	latestIn := map[member]*searchd.Message{} // for the nickname a member goes by in a server
	names := map[nameKey]*seenSpan{}
	note := func(k nameKey, at int64) {
		if k.name == "" {
			return
		}
		if s, ok := names[k]; ok {
			s.first, s.last = min(s.first, at), max(s.last, at)
		} else {
			names[k] = &seenSpan{at, at}
		}
	}
	for i := range msgs {
		m := &msgs[i]
		if m.Partial {
			// It carries what changed, not necessarily the author's names
			// now: it only makes sure the author exists (if it names one).
			if m.Author.ID == 0 {
				continue
			}
			if _, err := a.exec(`INSERT INTO users (id, name, display_name, display_at, is_bot) VALUES (?, ?, ?, ?, ?)
				ON CONFLICT (id) DO NOTHING`, m.Author.ID, m.Author.Username, m.Author.GlobalName, m.CreatedAt, m.Author.Bot); err != nil {
				return fmt.Errorf("user %d: %w", m.Author.ID, err)
			}
			continue
		}
		if l, ok := latest[m.Author.ID]; !ok || m.CreatedAt >= l.CreatedAt {
			latest[m.Author.ID] = m
		}
		guild, err := a.guildOf(m.ChannelID)
		if err != nil {
			return err
		}
		if k := (member{guild, m.Author.ID}); latestIn[k] == nil || m.CreatedAt >= latestIn[k].CreatedAt {
			latestIn[k] = m
		}
		note(nameKey{m.Author.ID, 0, "username", m.Author.Username}, m.CreatedAt)
		note(nameKey{m.Author.ID, 0, "global", m.Author.GlobalName}, m.CreatedAt)
		note(nameKey{m.Author.ID, guild, "nickname", m.Author.Nickname}, m.CreatedAt)
	}
	for id, m := range latest {
		if _, err := a.exec(`INSERT INTO users (id, name, display_name, display_at, is_bot) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET
				name = CASE WHEN excluded.display_at >= display_at THEN excluded.name ELSE name END,
				display_name = CASE WHEN excluded.display_at >= display_at THEN excluded.display_name ELSE display_name END,
				display_at = MAX(display_at, excluded.display_at),
				is_bot = excluded.is_bot`,
			id, m.Author.Username, m.Author.GlobalName, m.CreatedAt, m.Author.Bot); err != nil {
			return fmt.Errorf("user %d: %w", id, err)
		}
	}
	for k, m := range latestIn {
		if _, err := a.exec(`INSERT INTO server_nicknames (guild_id, user_id, nickname, at) VALUES (?, ?, ?, ?)
			ON CONFLICT (guild_id, user_id) DO UPDATE SET
				nickname = CASE WHEN excluded.at >= at THEN excluded.nickname ELSE nickname END,
				at = MAX(at, excluded.at)`,
			k.guild, k.user, m.Author.Nickname, m.CreatedAt); err != nil {
			return fmt.Errorf("user %d: %w", k.user, err)
		}
	}
	for k, s := range names {
		if _, err := a.exec(`INSERT INTO user_names (user_id, guild_id, kind, name, first_seen, last_seen) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (user_id, guild_id, kind, name) DO UPDATE SET
				first_seen = MIN(first_seen, excluded.first_seen), last_seen = MAX(last_seen, excluded.last_seen)`,
			k.user, k.guild, k.kind, k.name, s.first, s.last); err != nil {
			return fmt.Errorf("user %d name: %w", k.user, err)
		}
	}
	return nil
}

// withoutTombstoned leaves out the messages deleted or forgotten for
// good (tombstones), counted skipped. Before the authors are recorded:
// a forgotten author's old message (an import, a backfill) must not
// bring back the names the forget took away with it.
func (a *applier) withoutTombstoned(msgs []searchd.Message, res *searchd.BatchResult) ([]searchd.Message, error) {
	if !a.tombstones {
		return msgs, nil
	}
	var kept []searchd.Message
	for _, m := range msgs {
		row, err := a.queryRow(qTombstoned, m.ID)
		if err != nil {
			return nil, err
		}
		var one int
		switch err := row.Scan(&one); {
		case err == nil:
			res.Skipped++
		case errors.Is(err, sql.ErrNoRows):
			kept = append(kept, m)
		default:
			return nil, err
		}
	}
	return kept, nil
}

// upsertMessage stores m, which withoutTombstoned let through.
func (a *applier) upsertMessage(m *searchd.Message, res *searchd.BatchResult) error {
	if m.Partial {
		known, err := a.fillFromStored(m)
		if err != nil {
			return err
		}
		if !known && m.Author.ID == 0 {
			// A link preview for a message not stored (the bot's own, or
			// one never synced): there is no text to add it to.
			res.Unchanged++
			return nil
		}
	}
	if len(m.Embeds) > 0 {
		m.Content, _ = api.Clip(api.AddEmbeds(m.Content, m.Embeds), api.MaxContentBytes)
	}
	edited, reply := nullID(m.EditedAt), nullID(m.ReplyToID)
	r, err := a.exec(qInsertMsg, m.ID, m.ChannelID, m.Author.ID, m.CreatedAt, edited, m.Content, m.Type, reply, m.Attachments)
	if err != nil {
		return err
	}
	if n, _ := r.RowsAffected(); n == 0 {
		// Known. A snowflake names one message everywhere, so the same ID
		// in another channel is a broken export: refuse it rather than
		// move text into a channel whose readers may not see the other.
		row, err := a.queryRow(qStored, m.ID)
		if err != nil {
			return err
		}
		var stored int64
		var oldText, oldType string
		if err := row.Scan(&stored, &oldText, &oldType); err != nil {
			return err
		}
		if stored != m.ChannelID {
			res.Conflicts++
			if len(res.ConflictIDs) < searchd.MaxConflictIDs {
				res.ConflictIDs = append(res.ConflictIDs, m.ID)
			}
			return nil
		}
		// An edit keeps its segment, whose text is now stale.
		update := qUpdateMsg
		if a.older {
			update = qUpdateOlder
		}
		r, err := a.exec(update, edited, m.Content, m.Type, reply, m.Attachments,
			m.ID, edited, m.Content, m.Type, reply, m.Attachments, edited)
		if err != nil {
			return err
		}
		if n, _ := r.RowsAffected(); n == 0 {
			res.Unchanged++
			return nil
		}
		res.Updated++
		res.UpdatedIDs = append(res.UpdatedIDs, m.ID)
		a.touched[m.ChannelID] = true
		delete(a.recent, m.ChannelID) // a carried window holds its old words
		// Its text changed: its vector is stale, its keywords too.
		if _, err := a.exec(`DELETE FROM message_vectors WHERE message_id = ?`, m.ID); err != nil {
			return err
		}
		text, wasIndexed := a.indexed(m.ID, oldText, oldType)
		if err := a.unindex(m.ID, text, wasIndexed); err != nil {
			return err
		}
		if err := a.indexText(m); err != nil {
			return err
		}
		if !m.Partial { // a partial update carries no mentions
			if err := a.mention(m, true); err != nil {
				return err
			}
		}
		return a.touchSegmentOf(m.ID)
	}
	res.Inserted++
	a.touched[m.ChannelID] = true
	if err := a.indexText(m); err != nil {
		return err
	}
	if err := a.mention(m, false); err != nil {
		return err
	}
	a.fresh = append(a.fresh, m)
	return nil
}

// mention records whom m mentions; replacing, an edit's mentions take the
// old text's place: one it took out is a trace of what it removed.
func (a *applier) mention(m *searchd.Message, replacing bool) error {
	if replacing {
		if _, err := a.exec(`DELETE FROM message_mentions WHERE message_id = ?`, m.ID); err != nil {
			return err
		}
	}
	for _, u := range m.Mentions {
		if _, err := a.exec(qMention, m.ID, u, m.ChannelID, m.CreatedAt); err != nil {
			return err
		}
	}
	return nil
}

// fillFromStored completes a partial update of a stored message with
// what it does not carry, so that the update erases nothing: an empty
// content, type or reply, no attachments, no edit time all mean "not
// sent". An unknown message (or one stored in another channel, which the
// caller refuses) is left as it came; known reports whether it was stored.
func (a *applier) fillFromStored(m *searchd.Message) (known bool, err error) {
	row, err := a.queryRow(`SELECT channel_id, COALESCE(edited_at, 0), content, type, COALESCE(reply_to_id, 0), attachments
		FROM messages WHERE id = ?`, m.ID)
	if err != nil {
		return false, err
	}
	var s searchd.Message
	switch err := row.Scan(&s.ChannelID, &s.EditedAt, &s.Content, &s.Type, &s.ReplyToID, &s.Attachments); {
	case errors.Is(err, sql.ErrNoRows):
		if m.Type == "" {
			m.Type = "Default"
		}
		return false, nil
	case err != nil:
		return false, err
	case s.ChannelID != m.ChannelID:
		return true, nil
	}
	m.Content = cmp.Or(m.Content, s.Content)
	m.EditedAt = cmp.Or(m.EditedAt, s.EditedAt)
	m.Type = cmp.Or(m.Type, s.Type)
	m.ReplyToID = cmp.Or(m.ReplyToID, s.ReplyToID)
	m.Attachments = cmp.Or(m.Attachments, s.Attachments)
	return true, nil
}

// touchSegmentOf marks an edited message's segment as changed. It writes
// the row directly: loading the span here would cache bounds that a
// re-segmentation later in the batch must compute afresh.
func (a *applier) touchSegmentOf(msg int64) error {
	if _, err := a.exec(`UPDATE segments SET revision = revision + 1 WHERE id = (SELECT segment_id FROM message_segments WHERE message_id = ?)`, msg); err != nil {
		return err
	}
	return a.dropDerived(`(SELECT segment_id FROM message_segments WHERE message_id = ?)`, msg)
}

// dropDerived deletes what was computed from the text of the segment the
// subquery names: its vector and windows and its cached catch-up summary.
// Once a message of it changed or left (an edit, a deletion, an opt-out, a
// re-segmentation), stale ones are never used, but they would keep on
// disk what was taken away (a vector encodes its text); the embedding job
// embeds the segment again.
func (a *applier) dropDerived(segment string, arg int64) error {
	for _, table := range []string{"segment_summaries", "segment_windows", "segment_vectors"} {
		if _, err := a.exec(`DELETE FROM `+table+` WHERE segment_id = `+segment, arg); err != nil {
			return err
		}
	}
	return nil
}

// deleteMessage removes a message and its membership and leaves a
// tombstone (unless untombstoned); its segment's bounds and count are
// recomputed at flush.
func (a *applier) deleteMessage(id int64, res *searchd.BatchResult) error {
	row, err := a.queryRow(`SELECT m.channel_id, m.content, m.type, COALESCE(ms.segment_id, 0) FROM messages m
		LEFT JOIN message_segments ms ON ms.message_id = m.id WHERE m.id = ?`, id)
	if err != nil {
		return err
	}
	var channel, seg int64
	var text, msgType string
	stored := true
	if err := row.Scan(&channel, &text, &msgType, &seg); errors.Is(err, sql.ErrNoRows) {
		stored = false
	} else if err != nil {
		return err
	}
	text, wasIndexed := a.indexed(id, text, msgType)
	if err := a.unindex(id, text, wasIndexed && stored); err != nil {
		return err
	}
	r, err := a.exec(`DELETE FROM messages WHERE id = ?`, id)
	if err != nil {
		return err
	}
	if n, _ := r.RowsAffected(); n > 0 {
		res.Deleted++
		a.touched[channel] = true
		if err := a.textChanged(id); err != nil {
			return err
		}
	}
	if !a.untombstoned {
		if _, err := a.exec(`INSERT INTO tombstones (message_id, deleted_at) VALUES (?, ?) ON CONFLICT DO NOTHING`, id, a.now); err != nil {
			return err
		}
		a.tombstones = true
	}
	delete(a.placed, id)
	clear(a.latest)           // it may name the deleted message; reload on next use
	delete(a.recent, channel) // its window may hold it (none for a message not stored)
	if seg != 0 {
		s, err := a.span(seg)
		if err != nil {
			return err
		}
		s.recount = true // and what was derived from its text dropped (flush)
	}
	return nil
}

// nullID maps the zero ID (or time) to SQL NULL.
func nullID(v int64) any {
	if v == 0 {
		return nil
	}
	return v
}
