-- Authors forgotten by searchd forget --author (and by an opt-out, which
-- forgets its author the same way), each with the time of their latest
-- forget. Such a forget takes away their names and the mentions of them
-- as well as their messages; the messages leave tombstones, the names and
-- mentions nothing, so a restore of a backup made before the forget read
-- this table to forget them again (restoreforgets.go).
CREATE TABLE forgotten_authors (
	user_id INTEGER PRIMARY KEY,
	at      INTEGER NOT NULL
) STRICT;
