-- A page's cursor is refused once messages changed where its search
-- looked, not anywhere: a refusal for a change in any channel told a
-- member that channels they cannot read were busy. channel_versions holds
-- the index version of each channel's latest change of messages (new,
-- edited, deleted); meta's cursor_floor the index version of the latest
-- change that touched every channel at once (a restore, a reindex).
CREATE TABLE channel_versions (
	channel_id INTEGER PRIMARY KEY,
	version    INTEGER NOT NULL
) STRICT;

-- Cursors made before it are refused once: a keyword-mode cursor listed
-- segments where it now lists messages.
UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'index_version';
INSERT INTO meta (key, value) SELECT 'cursor_floor', value FROM meta WHERE key = 'index_version';
