-- Members who asked to be left out of the index (the bot's /optout): their
-- messages are forgotten (tombstones kept) and any that arrive later, from
-- the bot, a backfill or an import, are skipped. Only the user ID is kept.
CREATE TABLE opt_outs (
	user_id INTEGER PRIMARY KEY,
	at      INTEGER NOT NULL
) STRICT;
