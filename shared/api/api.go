// Package api holds the request and response types of searchd's HTTP API,
// shared by the daemon, its command-line client and the Discord bot.
//
// Discord IDs travel as decimal strings (JSON numbers lose precision past
// 2^53) and times as RFC 3339.
package api

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ID is a Discord snowflake that marshals as a JSON string.
type ID int64

func (id ID) String() string { return strconv.FormatInt(int64(id), 10) }

// MarshalText implements encoding.TextMarshaler.
func (id ID) MarshalText() ([]byte, error) { return []byte(id.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (id *ID) UnmarshalText(b []byte) error {
	v, err := ParseID(string(b))
	if err != nil {
		return err
	}
	*id = v
	return nil
}

// ParseID parses a decimal snowflake.
func ParseID(s string) (ID, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid id %q", s)
	}
	return ID(v), nil
}

// Error is the body of every non-2xx response.
type Error struct {
	Status  int    `json:"-"`
	Message string `json:"error"`
	// Code, when set, says what kind of refusal this is (CodeBadBatch).
	Code string `json:"code,omitempty"`
}

// CodeBadBatch marks a POST /v1/messages refused for what the batch
// itself holds (a missing id, malformed JSON, a body too large): sending
// it again cannot succeed. Every other failure may pass on a retry.
const CodeBadBatch = "bad_batch"

// CodeBusy marks a request refused with 503 because as many searches as
// searchd queues are already waiting; it may pass a moment later.
const CodeBusy = "busy"

// GenerationHeader, on a POST /v1/messages, names the database
// generation (Health.Generation) the sender checked before it: searchd
// refuses the batch when it serves another (CodeStaleGeneration). A
// batch without it (an import, a replay of refused batches, an older
// bot) is taken whatever searchd serves.
const GenerationHeader = "Dsearch-Generation"

// CodeStaleGeneration marks a POST /v1/messages refused with 409 because
// it names another generation than the database searchd serves: a
// restore came between the sender's check and its post. Nothing was
// stored; the sender checks again (its marks may run ahead of what the
// restored database holds) and sends it again.
const CodeStaleGeneration = "stale_generation"

// StaleGeneration reports whether err is searchd refusing a batch that
// names another generation (CodeStaleGeneration).
func StaleGeneration(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == CodeStaleGeneration
}

// BadBatch reports whether err is searchd refusing a batch for its
// content.
func BadBatch(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == CodeBadBatch
}

func (e *Error) Error() string { return fmt.Sprintf("searchd: %s (HTTP %d)", e.Message, e.Status) }

// Health is the response of GET /v1/healthz.
type Health struct {
	OK            bool   `json:"ok"`
	Version       string `json:"version"`
	SchemaVersion int    `json:"schema_version"`
	// Generation names the database: a restore changes it (the bot then
	// catches up from what the restored database holds).
	Generation string `json:"generation,omitempty"`
}

// Stats is the response of GET /v1/stats.
type Stats struct {
	Guilds          int64       `json:"guilds"`
	Channels        int64       `json:"channels"`
	Users           int64       `json:"users"`
	Messages        int64       `json:"messages"`
	Segments        int64       `json:"segments"`
	OverlappingSegs int64       `json:"overlapping_segments"`
	FirstMessageAt  *time.Time  `json:"first_message_at,omitempty"`
	LastMessageAt   *time.Time  `json:"last_message_at,omitempty"`
	GapQuantiles    []GapQuant  `json:"gap_quantiles"`
	SegmentSizes    []SizeQuant `json:"segment_size_quantiles"`
	// Embedding is absent when the daemon runs without a model.
	Embedding *EmbeddingStats `json:"embedding,omitempty"`
}

// EmbeddingStats is the embedding job's progress.
type EmbeddingStats struct {
	Model             string  `json:"model"`
	Backend           string  `json:"backend"`
	Dimension         int     `json:"dimension"`
	Phase             string  `json:"phase"`
	Segments          int64   `json:"segments"`
	SegmentsEmbedded  int64   `json:"segments_embedded"`  // current vectors, including too short
	SegmentsTooShort  int64   `json:"segments_too_short"` // under 30 characters: no vector
	SegmentsPooled    int64   `json:"segments_pooled"`    // searched by the mean of their messages until their text is embedded
	Messages          int64   `json:"messages"`
	MessagesEmbedded  int64   `json:"messages_embedded"`
	MessagesTooShort  int64   `json:"messages_too_short"`
	VectorsInMemory   int     `json:"vectors_in_memory"`
	SegmentsPerSecond float64 `json:"segments_per_second"`
	MessagesPerSecond float64 `json:"messages_per_second"`
	// ETASeconds estimates the rest of the running pass; Elsewhere names
	// the process embedding this database instead (phase "waiting").
	ETASeconds float64 `json:"eta_seconds,omitempty"`
	Elsewhere  string  `json:"embedding_elsewhere,omitempty"`
	LastError  string  `json:"last_error,omitempty"`
}

// GapQuant is one quantile of the time between consecutive messages of a
// channel.
type GapQuant struct {
	Quantile float64 `json:"quantile"`
	Seconds  float64 `json:"seconds"`
}

// SizeQuant is one quantile of messages per segment.
type SizeQuant struct {
	Quantile float64 `json:"quantile"`
	Messages int64   `json:"messages"`
}

// Message is a stored message, as the API returns it.
type Message struct {
	ID          ID         `json:"id"`
	GuildID     ID         `json:"guild_id,omitempty"`
	ChannelID   ID         `json:"channel_id"`
	AuthorID    ID         `json:"author_id"`
	AuthorName  string     `json:"author_name"`
	CreatedAt   time.Time  `json:"created_at"`
	EditedAt    *time.Time `json:"edited_at,omitempty"`
	Content     string     `json:"content"`
	Type        string     `json:"type"`
	ReplyToID   ID         `json:"reply_to_id,omitempty"`
	Attachments int        `json:"attachments,omitempty"`
	SegmentID   int64      `json:"segment_id,omitempty"`
	URL         string     `json:"url"`
}

// Text is the message as a line of a list: its content on one line or, for
// a message of attachments alone (a photo posted without a word), what it
// carried, so that it does not show as an empty line.
func (m Message) Text() string { return MessageText(m.Content, m.Attachments) }

// MessageText is Message.Text of a content and its number of attachments.
func MessageText(content string, attachments int) string {
	if s := strings.Join(strings.Fields(content), " "); s != "" || attachments == 0 {
		return s
	}
	if attachments == 1 {
		return "(an attachment)"
	}
	return fmt.Sprintf("(%d attachments)", attachments)
}

// MessageContext is the response of GET /v1/messages/{id}: the message and
// its bounded same-channel neighbours in time order. Neighbours are not
// necessarily part of the same conversation; see Segment for that.
type MessageContext struct {
	Message Message   `json:"message"`
	Before  []Message `json:"before"`
	After   []Message `json:"after"`
}

// Segment is the response of GET /v1/segments/{id}.
type Segment struct {
	ID           int64     `json:"id"`
	ChannelID    ID        `json:"channel_id"`
	StartAt      time.Time `json:"start_at"`
	EndAt        time.Time `json:"end_at"`
	MessageCount int       `json:"message_count"`
	Revision     int64     `json:"revision"`
	Messages     []Message `json:"messages"`
	Truncated    bool      `json:"truncated,omitempty"`
}

// MaxBatchItems is the most items (guilds, channels, messages, deletions)
// one POST /v1/messages may carry. The limits on what each item's texts
// may hold are in limits.go.
const MaxBatchItems = 1000

// MessageBatch is the body of POST /v1/messages: what the bot saw, in any
// mix. Applying a batch twice changes nothing.
type MessageBatch struct {
	Guilds   []Guild         `json:"guilds,omitempty"`
	Channels []Channel       `json:"channels,omitempty"`
	Messages []MessageUpsert `json:"messages,omitempty"`
	Deletes  []ID            `json:"deletes,omitempty"`
	// ForgetChannels are channels or threads deleted on Discord: their
	// messages and their threads' are forgotten, as searchd forget
	// --channel does. ForgetGuilds are servers the bot was removed from:
	// every channel of theirs is forgotten. Both apply after the rest.
	ForgetChannels []ID `json:"forget_channels,omitempty"`
	ForgetGuilds   []ID `json:"forget_guilds,omitempty"`
}

// Items is the number of items the batch carries (at most MaxBatchItems).
func (b *MessageBatch) Items() int {
	return len(b.Guilds) + len(b.Channels) + len(b.Messages) + len(b.Deletes) + len(b.ForgetChannels) + len(b.ForgetGuilds)
}

// MessageIDs is the response of GET /v1/channels/{id}/message-ids: the
// IDs of a channel's stored messages from one ID to another, ascending.
type MessageIDs struct {
	IDs []ID `json:"ids"`
	// More: the limit cut the list; ask again from after the last.
	More bool `json:"more,omitempty"`
}

// GuildChannels is the response of GET /v1/guilds/{id}/channels: the
// channels and threads searchd holds for a guild.
type GuildChannels struct {
	Channels []ID `json:"channels"`
}

// MaxMessageIDs is the most IDs one GET /v1/channels/{id}/message-ids
// returns.
const MaxMessageIDs = 5000

// Guild names a Discord server.
type Guild struct {
	ID   ID     `json:"id"`
	Name string `json:"name"`
}

// Channel names a channel or thread; a thread's ParentID is its channel.
type Channel struct {
	ID       ID     `json:"id"`
	GuildID  ID     `json:"guild_id,omitempty"`
	ParentID ID     `json:"parent_id,omitempty"`
	Name     string `json:"name"`
	Kind     string `json:"kind,omitempty"`
	Topic    string `json:"topic,omitempty"`
}

// Author is a message author as Discord shows them at that moment.
type Author struct {
	ID         ID     `json:"id"`
	Username   string `json:"username"`
	GlobalName string `json:"global_name,omitempty"`
	Nickname   string `json:"nickname,omitempty"`
	Bot        bool   `json:"bot,omitempty"`
}

// MessageUpsert creates or edits a message. An edit keeps the message in
// its conversation segment.
type MessageUpsert struct {
	ID          ID         `json:"id"`
	GuildID     ID         `json:"guild_id,omitempty"`
	ChannelID   ID         `json:"channel_id"`
	Author      Author     `json:"author"`
	CreatedAt   time.Time  `json:"created_at"`
	EditedAt    *time.Time `json:"edited_at,omitempty"`
	Content     string     `json:"content"`
	Type        string     `json:"type,omitempty"`
	ReplyToID   ID         `json:"reply_to_id,omitempty"`
	Attachments int        `json:"attachments,omitempty"`
	Mentions    []ID       `json:"mentions,omitempty"`
	// Partial marks an update that carries only some of the message
	// (Discord's MESSAGE_UPDATE may): over a stored message, its empty
	// fields keep what is stored instead of erasing it, and its author's
	// names do not replace the stored ones. An unknown message is stored
	// as it comes.
	Partial bool `json:"partial,omitempty"`
	// Embeds, on a partial update, are the link previews Discord added
	// after the message was sent: searchd adds a line for each to the
	// stored text (AddEmbeds) and keeps the text. Such an update may come
	// without an author (Discord sends none); it then changes only a
	// message already stored. A full upsert carries its previews in
	// Content (WithParts).
	Embeds []Embed `json:"embeds,omitempty"`
}

// BatchResult is the response of POST /v1/messages.
type BatchResult struct {
	Inserted  int `json:"inserted"`
	Updated   int `json:"updated"`
	Unchanged int `json:"unchanged"`
	Deleted   int `json:"deleted"`
	Skipped   int `json:"skipped"` // deleted earlier: not brought back
	// Truncated counts items whose texts were over the limits (limits.go)
	// and were kept cut, not refused.
	Truncated int `json:"truncated,omitempty"`
	// Conflicts are messages refused because their ID is stored in
	// another channel (the stored one is kept).
	Conflicts int `json:"conflicts,omitempty"`
	// ForgotChannels are the channels forget_channels forgot, with every
	// thread of theirs searchd knows (an archived one the bot's gateway
	// state lacks): what the bot takes out of its rejected batches.
	ForgotChannels []ID `json:"forgot_channels,omitempty"`
	// UpdatedIDs are the messages whose text (or kind, reply, files)
	// the batch changed: the bot withdraws the public answers quoting
	// them, as an edit may take quoted text out.
	UpdatedIDs []ID `json:"updated_ids,omitempty"`
}

// Backfill is a channel's backfill checkpoint, kept by searchd for the
// bot: GET and PUT /v1/backfill/{channel}.
type Backfill struct {
	Channel ID `json:"channel"`
	// Before is the oldest message the backfill reached (0: not started);
	// the next page is the messages before it.
	Before ID `json:"before"`
	// Complete: the channel's first message was reached.
	Complete bool `json:"complete"`
	// Newest is the newest stored message of the channel (read-only),
	// where catching up after downtime starts; asked with ?through=ID,
	// the newest at or before that message.
	Newest ID `json:"newest"`
	// Through echoes the ?through asked (read-only; 0: none), so that a
	// caller can tell an older searchd, which ignores it.
	Through ID `json:"through,omitempty"`
}

// JumpURL is the Discord link that opens a message in the client.
func JumpURL(guild, channel, message ID) string {
	g := "@me"
	if guild != 0 {
		g = guild.String()
	}
	return fmt.Sprintf("https://discord.com/channels/%s/%s/%s", g, channel, message)
}

// SearchResponse is the response of GET /v1/search.
type SearchResponse struct {
	Mode    string         `json:"mode"`
	Results []SearchResult `json:"results"`
	Total   int            `json:"total"`
	// NextCursor fetches the next page; absent on the last one.
	NextCursor string `json:"next_cursor,omitempty"`
	// KeywordFallback: no conversation contained the keywords, so the
	// search ran without them.
	KeywordFallback bool `json:"keyword_fallback,omitempty"`
	// NoConfidentResults: nothing clearly matched the query; the results
	// are the closest found, each with low confidence.
	NoConfidentResults bool `json:"no_confident_results,omitempty"`
	// Reading is the share of the query's letters the embedding model
	// reads as words or parts of words, 0 to 1, in the modes that embed
	// the query. Unread: it is under half (Korean to an English model):
	// hybrid ranked by the query's words, and semantic or pipeline
	// results are ranked by a model that cannot read the query.
	Reading *float64 `json:"reading,omitempty"`
	Unread  bool     `json:"unread,omitempty"`
	// LexicalLeftOut: in hybrid mode, none of the keyword side's first
	// hits held a quarter of the query's content words (a translation's
	// shared name or number), so the results are ranked by meaning alone.
	LexicalLeftOut bool `json:"lexical_left_out,omitempty"`
	// RankedMessages, when asked for (ranked=1), lists message IDs best
	// first across all results.
	RankedMessages []ID `json:"ranked_messages,omitempty"`
	// QueryEmbedMillis is the time spent embedding the query.
	QueryEmbedMillis float64 `json:"query_embed_ms"`
	// EmbeddedMessages counts message texts embedded on the fly (not yet
	// embedded by the background job) to rank the results.
	EmbeddedMessages int     `json:"embedded_messages,omitempty"`
	TookMillis       float64 `json:"took_ms"`
}

// SearchResult is a conversation segment (or, in lexical mode, a message).
type SearchResult struct {
	SegmentID   int64  `json:"segment_id,omitempty"`
	MessageID   ID     `json:"message_id"`
	ChannelID   ID     `json:"channel_id"`
	ChannelName string `json:"channel_name,omitempty"`
	// ParentID is a thread's channel: the bot's record of a public
	// answer judges a quoted thread by it, and an archived one is not in
	// the gateway's state.
	ParentID     ID        `json:"parent_id,omitempty"`
	StartAt      time.Time `json:"start_at"`
	MessageCount int       `json:"message_count"`
	Authors      []string  `json:"authors"`
	// AuthorIDs are the authors' IDs, in their order: a public answer
	// naming them is withdrawn when one opts out.
	AuthorIDs  []ID                 `json:"author_ids,omitempty"`
	Score      float64              `json:"score"`
	Components map[string]Component `json:"components"`
	// Confidence says how clearly the result matches the query.
	Confidence Confidence `json:"confidence"`
	Previews   []Message  `json:"previews"`
	URL        string     `json:"url"`
}

// Confidence is how clearly a result matches its query, judged relative
// to the query (docs/api.md, docs/retrieval.md "Abstention").
type Confidence struct {
	// Level is "high" (it clearly matches) or "low" (it is only the
	// closest thing found).
	Level string `json:"level"`
	// Standout: how many standard deviations the result's similarity
	// stands above where the best of the conversations searched falls by
	// chance (0: not judged so, in lexical mode, for a query the model
	// cannot read, or over too few conversations).
	Standout float64 `json:"standout"`
	// Support: the share of the query's content words found in the
	// result's messages, 0 to 1.
	Support float64 `json:"support"`
	// Closeness: how far the result's similarity goes from the query's
	// mean over the conversations searched towards the query's
	// similarity to itself as a passage, a copy's (1: as close as a
	// copy; 0: not judged, as Standout): a translation or a paraphrase.
	Closeness float64 `json:"closeness"`
	// Together: the support of the response's first ten results taken
	// together, for each of them (0: not judged, when standout and
	// support already made the response confident).
	Together float64 `json:"together"`
}

// Low says whether the result is only the closest thing found (a
// result from a searchd that does not judge has no level: not low).
func (c Confidence) Low() bool { return c.Level == "low" }

// Component is one retriever's rank and score within a fused result.
type Component struct {
	Rank  int     `json:"rank,omitempty"`
	Score float64 `json:"score"`
}

// QueryRequest is the body of POST /v1/query.
type QueryRequest struct {
	Question string `json:"question"`
	Authors  []ID   `json:"authors,omitempty"`
	Channels []ID   `json:"channels,omitempty"`
	// Readable are the channels the audience may read, when Channels
	// narrows to fewer: how common a word is, for a result's support, is
	// told from them (none: from Channels).
	Readable []ID   `json:"readable,omitempty"`
	Since    string `json:"since,omitempty"` // RFC 3339, a date, or Unix µs
	Until    string `json:"until,omitempty"`
	Limit    int    `json:"limit,omitempty"`
	// Cursor, from an earlier response's NextCursor with the same question
	// and filters, fetches the next page of its results (no new plan, no
	// summary).
	Cursor string `json:"cursor,omitempty"`
}

// QueryResponse is a grounded answer with the results it cites: [n] in
// the answer is Results[n-1].
type QueryResponse struct {
	Question string `json:"question"`
	Answer   string `json:"answer,omitempty"`
	// AnswerError says why there is no answer (no LLM, LLM down, nothing
	// found); the results are still there.
	AnswerError string `json:"answer_error,omitempty"`
	// NoConfidentResults: nothing clearly matched the question; the
	// results are the closest found, with low confidence, and there is
	// no summary.
	NoConfidentResults bool      `json:"no_confident_results,omitempty"`
	Plan               QueryPlan `json:"plan"`
	Authors            []ID      `json:"authors,omitempty"`
	// Time is the time a date in the question named ("last year", "on
	// October 13, 2023"), with a margin around it, when the results are from
	// it; TimeFallback: it named one but nothing was found then, so the
	// results are from any time.
	Time         *TimeSpan      `json:"time,omitempty"`
	TimeFallback bool           `json:"time_fallback,omitempty"`
	Results      []SearchResult `json:"results"`
	// Offset is the rank of Results[0] among all results (0 on the first
	// page); NextCursor fetches the next page and is absent on the last.
	Offset     int     `json:"offset,omitempty"`
	NextCursor string  `json:"next_cursor,omitempty"`
	TookMillis float64 `json:"took_ms"`
}

// TimeSpan is a stretch of time, both ends included.
type TimeSpan struct {
	Since time.Time `json:"since"`
	Until time.Time `json:"until"`
}

// TimeNote says in a line what the question's date did to the search, or
// "" when it named none.
func (r *QueryResponse) TimeNote() string {
	switch {
	case r.Time != nil:
		return fmt.Sprintf("from %s to %s (the time the question names, with a margin)",
			r.Time.Since.Format("2006-01-02"), r.Time.Until.Format("2006-01-02"))
	case r.TimeFallback:
		return "nothing from the time the question names: results from any time"
	}
	return ""
}

// QueryPlan is how the question was searched.
type QueryPlan struct {
	Subqueries []string `json:"subqueries"`
	Keywords   []string `json:"keywords"`
	Source     string   `json:"source"` // llm or rules
	Error      string   `json:"error,omitempty"`
}

// Alias is one name and the users it stands for.
type Alias struct {
	Name  string `json:"name"`
	Users []ID   `json:"users"`
}

// CatchupRequest is the body of POST /v1/catchup.
type CatchupRequest struct {
	Channel ID     `json:"channel"`
	Since   string `json:"since,omitempty"` // RFC 3339, a date, or Unix µs
	Until   string `json:"until,omitempty"`
	Limit   int    `json:"limit,omitempty"`
}

// CatchupResponse lists a channel's conversations, newest first.
type CatchupResponse struct {
	Conversations []Conversation `json:"conversations"`
	SummaryError  string         `json:"summary_error,omitempty"`
}

// Conversation is a segment with a one-line summary (empty when the LLM
// could not give one) and a link to its first message.
type Conversation struct {
	SegmentID    int64     `json:"segment_id"`
	StartAt      time.Time `json:"start_at"`
	EndAt        time.Time `json:"end_at"`
	MessageCount int       `json:"message_count"`
	Summary      string    `json:"summary,omitempty"`
	Keywords     []string  `json:"keywords,omitempty"`
	Cached       bool      `json:"cached,omitempty"`
	Preview      []Message `json:"preview"`
	URL          string    `json:"url"`
}
