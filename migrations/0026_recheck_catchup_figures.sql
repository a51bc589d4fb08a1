-- Catch-up lines cached by an older searchd were not checked for a date or
-- a figure their messages do not lead to, for a name none of them holds,
-- nor for a line speaking as a member (docs/answers.md): dropped, so that
-- each is written and checked again when next asked for.
DELETE FROM segment_summaries;
