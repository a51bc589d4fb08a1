-- A nickname is a server's: a member may go by one name in one server and
-- another elsewhere, and a server's members must not learn what they are
-- called in another. users.display_name held the name last seen in any
-- server, nickname first, and every result, answer and name lookup showed
-- it; it now holds the global name (else nothing: the username), and
-- nicknames are kept per server.

-- user_names' nickname rows name their server (0: a username or a global
-- name, the same everywhere).
CREATE TABLE user_names_by_server (
	user_id    INTEGER NOT NULL REFERENCES users(id),
	guild_id   INTEGER NOT NULL DEFAULT 0,
	kind       TEXT NOT NULL,
	name       TEXT NOT NULL,
	first_seen INTEGER NOT NULL,
	last_seen  INTEGER NOT NULL,
	PRIMARY KEY (user_id, guild_id, kind, name)
) STRICT, WITHOUT ROWID;
INSERT INTO user_names_by_server (user_id, guild_id, kind, name, first_seen, last_seen)
	SELECT user_id, 0, kind, name, first_seen, last_seen FROM user_names WHERE kind != 'nickname';
-- A nickname seen before this was kept without its server: it is kept for
-- a member who wrote in one server only, whose it must be; others'
-- come back as they are seen again.
CREATE TEMP TABLE one_server AS
	SELECT m.author_id AS user_id, MIN(c.guild_id) AS guild_id
	FROM messages m JOIN channels c ON c.id = m.channel_id
	WHERE c.guild_id IS NOT NULL
	GROUP BY m.author_id HAVING COUNT(DISTINCT c.guild_id) = 1;
INSERT INTO user_names_by_server (user_id, guild_id, kind, name, first_seen, last_seen)
	SELECT n.user_id, o.guild_id, n.kind, n.name, n.first_seen, n.last_seen
	FROM user_names n JOIN one_server o ON o.user_id = n.user_id WHERE n.kind = 'nickname';
DROP TABLE user_names;
ALTER TABLE user_names_by_server RENAME TO user_names;

-- The nickname a member goes by in a server now ('' for none), as of at.
-- Carried only where it is the name they were last shown under (a member
-- seen since without one went by their global name, users.display_name):
-- the latest nickname seen is not always the one they still have.
CREATE TABLE server_nicknames (
	guild_id INTEGER NOT NULL,
	user_id  INTEGER NOT NULL REFERENCES users(id),
	nickname TEXT NOT NULL,
	at       INTEGER NOT NULL,
	PRIMARY KEY (guild_id, user_id)
) STRICT, WITHOUT ROWID;
INSERT INTO server_nicknames (guild_id, user_id, nickname, at)
	SELECT n.guild_id, n.user_id, n.name, u.display_at
	FROM user_names n JOIN users u ON u.id = n.user_id
	WHERE n.kind = 'nickname' AND n.name = u.display_name;
DROP TABLE one_server;

UPDATE users SET display_name = COALESCE((SELECT name FROM user_names
	WHERE user_id = users.id AND kind = 'global' ORDER BY last_seen DESC LIMIT 1), '');
