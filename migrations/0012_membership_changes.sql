-- Every change to which segment a message belongs, in order, so searchd
-- can keep message → segment in memory (index.Memberships) and find a
-- required keyword's segments without a look-up per message. Triggers
-- log each write, whoever makes it: placing, re-placing and moving
-- messages, and the cascades of deleting a message or a segment.
-- segment_id 0: the message belongs to none (any more).
--
-- seq is a plain rowid (no AUTOINCREMENT, which would write
-- sqlite_sequence for each of an import's rows): it stays above every seq
-- a reader has seen because trimming always keeps the last entry.
CREATE TABLE membership_changes (
	seq        INTEGER PRIMARY KEY,
	message_id INTEGER NOT NULL,
	segment_id INTEGER NOT NULL
) STRICT;

CREATE TRIGGER message_segments_added AFTER INSERT ON message_segments BEGIN
	INSERT INTO membership_changes (message_id, segment_id) VALUES (new.message_id, new.segment_id);
END;

CREATE TRIGGER message_segments_moved AFTER UPDATE ON message_segments BEGIN
	INSERT INTO membership_changes (message_id, segment_id) SELECT old.message_id, 0 WHERE old.message_id <> new.message_id;
	INSERT INTO membership_changes (message_id, segment_id) VALUES (new.message_id, new.segment_id);
END;

CREATE TRIGGER message_segments_removed AFTER DELETE ON message_segments BEGIN
	INSERT INTO membership_changes (message_id, segment_id) VALUES (old.message_id, 0);
END;
