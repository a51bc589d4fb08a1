-- segments_epoch grows whenever the segments a filter by channels admits
-- can change: a segment created, deleted or moved, or a channel's parent
-- or kind (which public threads a channel brings) set anew. Such a filter's
-- answer is kept until it moves (searchd/search/filters.go), where
-- index_version moves with every message: on a busy server of 6.5 M
-- messages a member's readable channels took 0.2 s to list again after
-- each one.
INSERT INTO meta (key, value) VALUES ('segments_epoch', '1');

CREATE TRIGGER segments_epoch_added AFTER INSERT ON segments BEGIN
	UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'segments_epoch';
END;
CREATE TRIGGER segments_epoch_removed AFTER DELETE ON segments BEGIN
	UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'segments_epoch';
END;
CREATE TRIGGER segments_epoch_moved AFTER UPDATE OF id, channel_id ON segments
	WHEN OLD.id IS NOT NEW.id OR OLD.channel_id IS NOT NEW.channel_id BEGIN
	UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'segments_epoch';
END;
CREATE TRIGGER segments_epoch_channel AFTER UPDATE OF id, parent_id, kind ON channels
	WHEN OLD.id IS NOT NEW.id OR OLD.parent_id IS NOT NEW.parent_id OR OLD.kind IS NOT NEW.kind BEGIN
	UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'segments_epoch';
END;
CREATE TRIGGER segments_epoch_channel_removed AFTER DELETE ON channels BEGIN
	UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'segments_epoch';
END;
