-- A segment's ID is never given to another: SQLite hands a new row the
-- largest ID + 1, so deleting the newest conversation (its messages
-- deleted, or opted out) gave its ID to the next one, in any channel, and
-- what was keyed by it and its revision (a catch-up summary being written
-- while the LLM ran, a vector the embedding job was computing) could land
-- on a conversation it never described. segments_high is the largest ID
-- ever given; new segments take the next (searchd/sqlite/place.go).
INSERT INTO meta (key, value) VALUES ('segments_high', CAST((SELECT COALESCE(MAX(id), 0) FROM segments) AS TEXT));

CREATE TRIGGER segments_high AFTER INSERT ON segments
	WHEN NEW.id > CAST((SELECT value FROM meta WHERE key = 'segments_high') AS INTEGER) BEGIN
	UPDATE meta SET value = CAST(NEW.id AS TEXT) WHERE key = 'segments_high';
END;
