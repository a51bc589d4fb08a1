-- The base schema: what Discord gives us, and conversation segments.
-- IDs are Discord snowflakes (int64; negative ones come from converted
-- archives older than Discord). Times are Unix microseconds, UTC.

CREATE TABLE meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
) STRICT;

CREATE TABLE guilds (
	id   INTEGER PRIMARY KEY,
	name TEXT NOT NULL DEFAULT ''
) STRICT;

-- A thread is a channel whose parent_id is the channel it hangs off;
-- for an ordinary channel parent_id is its category, if known.
CREATE TABLE channels (
	id        INTEGER PRIMARY KEY,
	guild_id  INTEGER REFERENCES guilds(id),
	parent_id INTEGER,
	name      TEXT NOT NULL DEFAULT '',
	kind      TEXT NOT NULL DEFAULT '',
	topic     TEXT NOT NULL DEFAULT ''
) STRICT;

-- name is the username; display_name the name most recently shown for
-- them (nickname, else global name, else username) as of display_at.
CREATE TABLE users (
	id           INTEGER PRIMARY KEY,
	name         TEXT NOT NULL DEFAULT '',
	display_name TEXT NOT NULL DEFAULT '',
	display_at   INTEGER NOT NULL DEFAULT 0,
	is_bot       INTEGER NOT NULL DEFAULT 0
) STRICT;

-- Every name a user has been seen under, keyed by the unchanging user ID:
-- the raw material of the alias dictionary. kind is 'username',
-- 'nickname' or 'global'.
CREATE TABLE user_names (
	user_id    INTEGER NOT NULL REFERENCES users(id),
	kind       TEXT NOT NULL,
	name       TEXT NOT NULL,
	first_seen INTEGER NOT NULL,
	last_seen  INTEGER NOT NULL,
	PRIMARY KEY (user_id, kind, name)
) STRICT, WITHOUT ROWID;

CREATE TABLE messages (
	id          INTEGER PRIMARY KEY,
	channel_id  INTEGER NOT NULL REFERENCES channels(id),
	author_id   INTEGER NOT NULL REFERENCES users(id),
	created_at  INTEGER NOT NULL,
	edited_at   INTEGER,
	content     TEXT NOT NULL DEFAULT '',
	type        TEXT NOT NULL DEFAULT 'Default',
	reply_to_id INTEGER,
	attachments INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX messages_channel_time ON messages(channel_id, created_at, id);
CREATE INDEX messages_author_time ON messages(author_id, created_at);

-- Users a message mentions (addressees: a segmentation signal), with the
-- message's channel and time so "when was this user last addressed here"
-- is one index lookup.
CREATE TABLE message_mentions (
	message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
	user_id    INTEGER NOT NULL,
	channel_id INTEGER NOT NULL,
	created_at INTEGER NOT NULL,
	PRIMARY KEY (message_id, user_id)
) STRICT, WITHOUT ROWID;

-- A conversation segment. revision grows whenever its membership or a
-- member's text changes, so the embedding job can tell stale vectors.
CREATE TABLE segments (
	id               INTEGER PRIMARY KEY,
	channel_id       INTEGER NOT NULL REFERENCES channels(id),
	start_message_id INTEGER NOT NULL,
	end_message_id   INTEGER NOT NULL,
	start_at         INTEGER NOT NULL,
	end_at           INTEGER NOT NULL,
	message_count    INTEGER NOT NULL,
	revision         INTEGER NOT NULL DEFAULT 1
) STRICT;
CREATE INDEX segments_channel_start ON segments(channel_id, start_at, id);

-- One row per message. Membership is a table, not a time range, because
-- a late reply rejoins an older segment and segments overlap.
CREATE TABLE message_segments (
	message_id INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
	segment_id INTEGER NOT NULL REFERENCES segments(id) ON DELETE CASCADE
) STRICT;
CREATE INDEX message_segments_segment ON message_segments(segment_id);

-- Deleted message IDs, so a later import of an old export does not bring
-- a deleted message back. No content is kept.
CREATE TABLE tombstones (
	message_id INTEGER PRIMARY KEY,
	deleted_at INTEGER NOT NULL
) STRICT;

-- Import progress per export file, for skipping finished files and
-- resuming a file after a crash.
CREATE TABLE imports (
	path          TEXT PRIMARY KEY,
	size          INTEGER NOT NULL,
	mtime         INTEGER NOT NULL,
	messages_done INTEGER NOT NULL,
	complete      INTEGER NOT NULL DEFAULT 0,
	updated_at    INTEGER NOT NULL
) STRICT;
