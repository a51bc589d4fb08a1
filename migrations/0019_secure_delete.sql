-- What is deleted is gone from the file too. SQLite's secure_delete
-- (searchd/sqlite/db.go) zeroes deleted rows and freed pages, but the
-- keyword index (FTS5, contentless_delete) only marks a deleted message:
-- its words and their positions stay in the index's segments until they
-- are merged. One merge of every segment ('optimize') takes out what
-- earlier deletions and edits left; sqlite.DB.PurgeDeleted does it again
-- after an opt-out, a forget or a restore and, under searchd serve, every
-- six hours after deletions and edits.
INSERT INTO meta (key, value) VALUES ('purged_seq', CAST((SELECT COALESCE(MAX(seq), 0) FROM sqlite_sequence WHERE name = 'text_changes') AS TEXT));
INSERT INTO messages_fts (messages_fts) VALUES ('optimize');
