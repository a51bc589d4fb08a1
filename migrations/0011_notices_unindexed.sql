-- Discord's notices (joins, calls, pins, thread starts, renames) stay
-- stored as history but leave the keyword index: "Started a call that
-- lasted 251 minutes." is never a search hit. The types kept are
-- searchd/sqlite's spokenTypes (segment.IsSystem's complement). The text
-- epoch makes a running daemon's in-memory keyword index load again.
DELETE FROM messages_fts WHERE rowid IN (SELECT id FROM messages
	WHERE type NOT IN ('Default', 'Reply', 'ChatInputCommand', 'ContextMenuCommand', '20', '23'));

UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key IN ('text_epoch', 'index_version');
