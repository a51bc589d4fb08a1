-- pooled = 1: a provisional vector, the mean of the segment's message
-- vectors, which the embedding job's first pass stores so that search by
-- meaning covers a new history in the time its messages take; its second
-- pass replaces it with the vector of the segment's text (docs/design.md,
-- "The first embedding in two passes").
ALTER TABLE segment_vectors ADD COLUMN pooled INTEGER NOT NULL DEFAULT 0;
