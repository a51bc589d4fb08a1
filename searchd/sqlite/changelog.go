// What a write leaves for the readers of the database: the keyword index's
// rows, the change logs the daemon follows, and the versions cursors and
// caches are checked against.

package sqlite

import (
	"context"
	"database/sql"
	"maps"
	"slices"

	"dsearch/searchd"
	"dsearch/searchd/lexical"
	"dsearch/searchd/segment"
)

// logChanges adds the queued keywords and writes what the transaction's
// batches changed to the logs the daemon follows, and marks the index
// changed. Once a transaction, not a part: a statement with a statement
// journal (the logs' inserts) also makes FTS5 write what it holds in
// memory out as a new segment of its index, and every segment costs
// merging later.
func (a *applier) logChanges(changed bool) error {
	if err := a.indexQueued(); err != nil {
		return err
	}
	if err := a.logTextChanges(); err != nil {
		return err
	}
	if err := a.logUnindexed(); err != nil {
		return err
	}
	if err := a.logMemberships(); err != nil {
		return err
	}
	if !changed {
		return nil
	}
	if err := bumpIndexVersion(a.ctx, a.tx); err != nil {
		return err
	}
	// A public thread's change is its parent's too: a filter on the parent
	// reads the thread (a private one is named itself, and must tell the
	// parent's readers nothing), and once the thread is deleted its own
	// version is no longer counted, so the scope's version would go down.
	_, err := a.exec(`INSERT INTO channel_versions (channel_id, version)
		SELECT id, (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'index_version')
		FROM (SELECT value AS id FROM json_each(?1) UNION SELECT parent_id FROM channels
			WHERE id IN (SELECT value FROM json_each(?1)) AND parent_id IS NOT NULL AND `+publicThread+`) WHERE true
		ON CONFLICT (channel_id) DO UPDATE SET version = excluded.version`, jsonIDs(slices.Sorted(maps.Keys(a.touched))))
	clear(a.touched)
	return err
}

// textChanged notes a message whose text the keyword index must read
// again. Imports log theirs too: a daemon running beside an import then
// applies each batch's few thousand changes instead of reading every
// message again after each batch (index.Keywords).
func (a *applier) textChanged(id int64) error {
	a.changed = append(a.changed, id)
	return nil
}

// logTextChanges writes the batch's text changes to the log, in the order
// they were made, with one statement: an import's batch makes thousands.
func (a *applier) logTextChanges() error {
	if len(a.changed) == 0 {
		return nil
	}
	_, err := a.exec(`INSERT INTO text_changes (message_id) SELECT value FROM json_each(?) ORDER BY key`, jsonIDs(a.changed))
	a.changed = a.changed[:0]
	return err
}

// logUnindexed counts the words the batch took out of the keyword index
// (meta text_removed): the purge writes the index anew after them
// (rewriteKeywords), not after what was only added.
func (a *applier) logUnindexed() error {
	if a.unindexed == 0 {
		return nil
	}
	_, err := a.exec(`INSERT INTO meta (key, value) VALUES ('text_removed', ?)
		ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + CAST(excluded.value AS INTEGER)`, a.unindexed)
	a.unindexed = 0
	return err
}

// logMemberships writes the memberships the batch made to the membership
// log with one statement (migration 0013: no trigger per row). Moves and
// removals are logged by their triggers; the log's reader reads each
// message's segment as stored, so their order does not matter.
func (a *applier) logMemberships() error {
	if len(a.joined) == 0 {
		return nil
	}
	_, err := a.exec(`INSERT INTO membership_changes (message_id, segment_id) SELECT value, 0 FROM json_each(?) ORDER BY key`, jsonIDs(a.joined))
	a.joined = a.joined[:0]
	return err
}

// indexText queues a message for the keyword index, unless it is one of
// Discord's notices: a join or a call is history, never a search hit.
// FTS5 writes what it holds in memory out to a new segment of its index
// whenever a row comes with a lower rowid than the one before, and every
// segment costs merging later; a batch's messages come channel by channel,
// so they are added at the end of the transaction, in rowid order
// (indexQueued).
func (a *applier) indexText(m *searchd.Message) error {
	if segment.IsSystem(m.Type) {
		return nil
	}
	a.toIndex[m.ID] = m.Content
	return a.textChanged(m.ID)
}

// indexed is what the keyword index holds of a stored message: its text,
// unless it is one of Discord's notices or still queued (indexQueued).
func (a *applier) indexed(id int64, text, msgType string) (string, bool) {
	if _, queued := a.toIndex[id]; queued || segment.IsSystem(msgType) {
		return "", false
	}
	return text, true
}

// unindex takes a message out of the keyword index, queued or written.
// The index keeps no text (contentless), so it is given the words it
// was indexed with, read before the row changed (indexed), and with
// FTS5's secure-delete (migration 0022) it removes them from its
// segments at once: otherwise a deleted message's words would stay in
// the file until the segments were merged. So what is indexed of a text
// (indexText, lexical.Bigrams) may change only with a migration that
// builds the index anew, as 0022 does: words given here that the index
// does not hold take nothing out.
func (a *applier) unindex(id int64, text string, wasIndexed bool) error {
	delete(a.toIndex, id)
	if !wasIndexed {
		return nil
	}
	a.unindexed++
	_, err := a.exec(qUnindex, id, text, lexical.Bigrams(text))
	return err
}

// indexQueued adds the queued messages to the keyword index, in rowid
// order.
func (a *applier) indexQueued() error {
	for _, id := range slices.Sorted(maps.Keys(a.toIndex)) {
		text := a.toIndex[id]
		if _, err := a.exec(qIndex, id, text, lexical.Bigrams(text)); err != nil {
			return err
		}
	}
	clear(a.toIndex)
	return nil
}

// bumpIndexVersion marks that the messages searched changed.
func bumpIndexVersion(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'index_version'`)
	return err
}

// raiseCursorFloor marks a change of every channel at once (a reindex, a
// restore): no cursor made before it pages after it (CursorVersion).
func raiseCursorFloor(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO meta (key, value) SELECT 'cursor_floor', value FROM meta WHERE key = 'index_version'
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`)
	return err
}
