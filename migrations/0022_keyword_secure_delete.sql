-- What is deleted is gone from the keyword index at once, not at its
-- next merge. A contentless_delete FTS5 table only marks a deleted row:
-- its words stayed in the index's segments (and so in the file) until
-- a purge merged them all, every six hours under searchd serve. A plain
-- contentless table is given a deleted row's words (searchd/sqlite
-- applier.unindex reads them from messages before the row changes) and,
-- with secure-delete, takes them out of its segments in the same write.
-- The index is built anew from messages when searchd next opens the
-- database (fillKeywordIndex: bigrams are computed in Go).
DROP TABLE messages_fts;
CREATE VIRTUAL TABLE messages_fts USING fts5(
	text, bigrams,
	content = '',
	tokenize = 'unicode61 remove_diacritics 2'
);
INSERT INTO messages_fts (messages_fts, rank) VALUES ('secure-delete', 1);
DELETE FROM meta WHERE key = 'fts_ready';
DELETE FROM meta WHERE key = 'purged_seq'; -- 0019's merges: nothing to merge now
