-- A channel's most recently started segment, by start time and then start
-- message, as an in-order placement creates them: placement must not
-- depend on row IDs, which re-segmentation reuses.
CREATE INDEX segments_channel_start_message ON segments(channel_id, start_at, start_message_id);
