-- An import's progress names its export's channel and server, so that it
-- leaves with a deleted channel or a server the bot left: its key, a
-- digest of the export's path, confirms a guessed "Server - Category -
-- channel [ID].json" to whoever holds the file. Progress kept before
-- names neither, until the file is imported again.
ALTER TABLE imports ADD COLUMN channel_id INTEGER;
ALTER TABLE imports ADD COLUMN guild_id INTEGER;
CREATE INDEX imports_channel ON imports (channel_id);
CREATE INDEX imports_guild ON imports (guild_id);
