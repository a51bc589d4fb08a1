-- Channels and threads deleted on Discord (the bot's forget_channels).
-- Their IDs are never used again, so nothing of them is stored again: a
-- history page fetched before the deletion and posted after it, or an
-- older export, would otherwise bring the messages back without
-- tombstones (only messages stored at the deletion get one). The
-- channel's own row (its name and topic) goes with it.
CREATE TABLE deleted_channels (
	channel_id INTEGER PRIMARY KEY,
	deleted_at INTEGER NOT NULL
) STRICT;
