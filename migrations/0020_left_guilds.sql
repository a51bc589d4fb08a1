-- Guilds the bot was removed from (the bot's forget_guilds). Their
-- messages are forgotten without tombstones, since they were not deleted
-- on Discord: if the bot is added back, its history pass brings them
-- back. Until then nothing of such a guild is stored, so a history page
-- in flight when the bot was removed does not bring it back; a batch that
-- places the guild again (the bot's GUILD_CREATE) takes it off the list.
CREATE TABLE left_guilds (
	guild_id INTEGER PRIMARY KEY,
	left_at  INTEGER NOT NULL
) STRICT;
