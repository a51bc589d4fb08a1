-- One-line summaries of segments for catch-up, cached per segment
-- revision and model, so asking again is instant and an edit refreshes it.
CREATE TABLE segment_summaries (
	segment_id INTEGER PRIMARY KEY REFERENCES segments(id) ON DELETE CASCADE,
	revision   INTEGER NOT NULL,
	model      TEXT NOT NULL,
	summary    TEXT NOT NULL,
	keywords   TEXT NOT NULL -- JSON array
) STRICT;
