// Package searchd holds the domain types of the search daemon. The
// subpackages implement them with one technology each (sqlite, export,
// server, socket); wiring lives only in cmd/searchd.
package searchd

import "dsearch/shared/api"

// Guild is a Discord server.
type Guild struct {
	ID   int64
	Name string
}

// Channel is a channel or a thread. A thread's ParentID is its channel; an
// ordinary channel's is its category, when known.
type Channel struct {
	ID       int64
	GuildID  int64
	ParentID int64
	Name     string
	Kind     string
	Topic    string
}

// IsThread reports whether a channel kind names a thread.
func IsThread(kind string) bool {
	switch kind {
	case "GuildPublicThread", "GuildPrivateThread", "GuildNewsThread":
		return true
	}
	return false
}

// Author is who wrote a message, with the names Discord showed then.
type Author struct {
	ID         int64
	Username   string
	GlobalName string
	Nickname   string
	Bot        bool
}

// Name is the author's name across Discord: the global name, else the
// username. A nickname is one server's (DisplayName).
func (a Author) Name() string {
	if a.GlobalName != "" {
		return a.GlobalName
	}
	return a.Username
}

// DisplayName is the name the author was shown under in the message's
// server.
func (a Author) DisplayName() string {
	switch {
	case a.Nickname != "":
		return a.Nickname
	case a.GlobalName != "":
		return a.GlobalName
	}
	return a.Username
}

// Message is one Discord message. Times are Unix microseconds, UTC;
// EditedAt and ReplyToID are 0 when absent.
type Message struct {
	ID          int64
	ChannelID   int64
	Author      Author
	CreatedAt   int64
	EditedAt    int64
	Content     string
	Type        string
	ReplyToID   int64
	Attachments int
	Mentions    []int64
	// Partial: over a stored message, empty fields keep what is stored
	// (api.MessageUpsert.Partial).
	Partial bool
	// Embeds are link previews added after the message was sent, joined
	// to its text (api.MessageUpsert.Embeds); Author.ID is 0 when the
	// update did not say who wrote it.
	Embeds []api.Embed
}

// Batch is a set of changes applied in one transaction: what one import
// batch or one POST /v1/messages carries.
type Batch struct {
	Guilds   []Guild
	Channels []Channel
	Messages []Message
	Deletes  []int64
	// Untombstoned: the deletes leave no tombstone (a guild the bot left,
	// whose messages come back if it is added again: sqlite.ForgetLeftGuild).
	Untombstoned bool
	// Outdated are edits searchd refused, kept for a replay: a message
	// stored in an older version is deleted, without a tombstone, so that
	// what the member edited away is not served meanwhile.
	Outdated []Outdated
}

// Outdated is a message's edit time (Unix µs) in a version not stored.
type Outdated struct {
	ID, EditedAt int64
}

// Bound cuts every text of the batch to the limits of shared/api (a
// message's content, topics, names) and drops mentions past
// api.MaxMentions. It returns how many guilds, channels and messages it
// had to cut. Every way into the database (import, the API) passes
// through it, in sqlite's Apply.
func (b *Batch) Bound() int {
	n := 0
	clip := func(cut bool, fields ...*string) bool {
		for _, f := range fields {
			var c bool
			*f, c = api.Clip(*f, api.MaxNameBytes)
			cut = cut || c
		}
		return cut
	}
	count := func(cut bool) {
		if cut {
			n++
		}
	}
	for i := range b.Guilds {
		count(clip(false, &b.Guilds[i].Name))
	}
	for i := range b.Channels {
		c := &b.Channels[i]
		var cut bool
		c.Topic, cut = api.Clip(c.Topic, api.MaxTopicBytes)
		count(clip(cut, &c.Name, &c.Kind))
	}
	for i := range b.Messages {
		m := &b.Messages[i]
		var cut bool
		m.Content, cut = api.Clip(m.Content, api.MaxContentBytes)
		if len(m.Mentions) > api.MaxMentions {
			m.Mentions, cut = m.Mentions[:api.MaxMentions], true
		}
		if len(m.Embeds) > api.MaxEmbeds {
			m.Embeds, cut = m.Embeds[:api.MaxEmbeds], true
		}
		count(clip(cut, &m.Type, &m.Author.Username, &m.Author.GlobalName, &m.Author.Nickname))
	}
	return n
}

// BatchResult counts what applying a Batch did.
type BatchResult struct {
	Inserted  int
	Updated   int
	Unchanged int
	Deleted   int
	Skipped   int // tombstoned (deleted earlier, not brought back) or by a member who opted out
	Truncated int // cut to the limits of shared/api (Batch.Bound)
	// Conflicts are messages whose ID is already stored in another
	// channel: refused, the stored one kept (docs/design.md, "Import").
	Conflicts   int
	ConflictIDs []int64 // the first few, for the log
	// UpdatedIDs are the messages Updated counts, of one batch (Add does
	// not carry them: an import's would grow with its history).
	UpdatedIDs []int64
	// DroppedIDs are the messages Batch.Outdated dropped (Deleted counts
	// them too).
	DroppedIDs []int64
}

// Changed reports whether the batch changed the messages searched.
func (r *BatchResult) Changed() bool { return r.Inserted+r.Updated+r.Deleted > 0 }

// Add sums two results.
func (r *BatchResult) Add(o BatchResult) {
	r.Inserted += o.Inserted
	r.Updated += o.Updated
	r.Unchanged += o.Unchanged
	r.Deleted += o.Deleted
	r.Skipped += o.Skipped
	r.Truncated += o.Truncated
	r.Conflicts += o.Conflicts
	r.ConflictIDs = append(r.ConflictIDs, o.ConflictIDs[:min(len(o.ConflictIDs), MaxConflictIDs-len(r.ConflictIDs))]...)
}

// MaxConflictIDs is how many conflicting IDs a BatchResult lists.
const MaxConflictIDs = 10
