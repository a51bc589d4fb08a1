-- The further windows of a segment too long for the model's input: window
-- 0 is segment_vectors' vector; window N ≥ 1 begins at the segment's
-- message number first_message (0-based, time order). They are current
-- exactly when the segment's segment_vectors row is, and are replaced with
-- it.
CREATE TABLE segment_windows (
	segment_id    INTEGER NOT NULL REFERENCES segments(id) ON DELETE CASCADE,
	window        INTEGER NOT NULL,
	first_message INTEGER NOT NULL,
	vector        BLOB NOT NULL,
	PRIMARY KEY (segment_id, window)
) STRICT;

-- windowed = 0: the vector predates windows; the embedding job adds the
-- windows such a segment needs without re-embedding the rest, and the old
-- vector serves meanwhile.
ALTER TABLE segment_vectors ADD COLUMN windowed INTEGER NOT NULL DEFAULT 0;
