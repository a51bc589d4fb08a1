-- Embedding vectors of the model named in meta (embedding_model,
-- embedding_dim). A vector is an int8 per dimension after a float32 scale
-- (sqlite.EncodeVector; plain float32 is read too). A NULL vector marks
-- text too short to embed, so the job does not retry it; a segment's row
-- is stale when its revision differs from the segment's.

CREATE TABLE segment_vectors (
	segment_id INTEGER PRIMARY KEY REFERENCES segments(id) ON DELETE CASCADE,
	revision   INTEGER NOT NULL,
	vector     BLOB
) STRICT;

CREATE TABLE message_vectors (
	message_id INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
	vector     BLOB
) STRICT;
