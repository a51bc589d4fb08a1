-- How far the bot's backfill has paged back through each channel, so a
-- restart resumes instead of starting over. before_id is the oldest
-- message reached; complete means the channel's start was reached.
CREATE TABLE backfill (
	channel_id INTEGER PRIMARY KEY,
	before_id  INTEGER NOT NULL DEFAULT 0,
	complete   INTEGER NOT NULL DEFAULT 0,
	updated_at INTEGER NOT NULL
) STRICT;
