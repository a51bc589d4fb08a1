-- Keyword search (see searchd/lexical): each message's text under the
-- unicode61 tokenizer, and the bigrams of its Hangul/CJK runs, so that a
-- two-syllable Korean word matches inside longer word forms. Contentless:
-- the text itself lives in messages only. searchd fills it for messages
-- stored before this migration (meta fts_ready).
CREATE VIRTUAL TABLE messages_fts USING fts5(
	text, bigrams,
	content = '', contentless_delete = 1,
	tokenize = 'unicode61 remove_diacritics 2'
);

-- index_version grows with every change to messages or vectors; search
-- cursors carry it, so a cursor from before a change is refused.
INSERT INTO meta (key, value) VALUES ('index_version', '1');
