-- The messages whose searchable fields changed, in order, so searchd's
-- in-memory keyword index can follow writes it did not make itself
-- (searchd forget beside a running daemon) and apply its own without
-- re-reading everything. Imports do not log each message: they bump
-- meta text_epoch, and the daemon reloads the index instead.
CREATE TABLE text_changes (
	seq        INTEGER PRIMARY KEY AUTOINCREMENT,
	message_id INTEGER NOT NULL
);

INSERT INTO meta (key, value) VALUES ('text_epoch', '1');
