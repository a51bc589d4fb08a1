-- Lookups of the busy-channel segmenter: an author's latest message in a
-- channel, and the latest message that mentioned someone.
CREATE INDEX messages_channel_author ON messages(channel_id, author_id, created_at, id);
CREATE INDEX message_mentions_user ON message_mentions(user_id, channel_id, created_at, message_id);
