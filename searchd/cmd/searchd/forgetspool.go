package main

import (
	"dsearch/searchd/sqlite"
	"dsearch/shared/api"
	"dsearch/shared/spoolforget"
)

// What searchd forget forgets is taken out of the batches searchd refused
// from the bot too (SPOOL/rejected/, in the bot's default spool,
// DATA/bot-spool): their text would stay on disk, and dsearch-bot
// --replay-rejected would store them again, as they were never stored
// and left no tombstone. It is the bot's own cleaning
// (spoolforget.Rejected), under rejected/'s flock, which the bot takes to
// rewrite them too and to replay each (forget cleans them before its
// database forget, which a replay could otherwise pass). The batches
// still waiting for searchd are the running bot's, which keeps their
// sizes: they are delivered as messages written since.

// forgetStep, when set (tests), runs once searchd forget's database
// forget is done.
var forgetStep func(step string)

// forgetRejected takes out of spool's rejected batches the messages f
// selects, channels being f's channel with its threads (the batches'
// placements add theirs). It returns the messages taken out. deleted
// (nil before the database forget) tells a message's tombstone: a link
// preview's update names no author, and goes with its message.
func forgetRejected(spool string, f sqlite.ForgetFilter, channels map[int64]bool, deleted func(int64) bool) (int, error) {
	return spoolforget.Rejected(spool, func(m api.MessageUpsert, parent api.ID) bool {
		if m.ID != 0 && m.Author.ID == 0 && m.Partial && deleted != nil && deleted(int64(m.ID)) {
			return true
		}
		// A place (no ID: a channel's or server's name, or a thread the
		// batches place, asked about to read again the batches holding
		// its messages) goes only with a forgotten channel: an author's
		// or a time's forget keeps the names of the places.
		if m.ID == 0 {
			return f.Channel != 0 && (channels[int64(m.ChannelID)] || channels[int64(parent)])
		}
		return (f.Author == 0 || int64(m.Author.ID) == f.Author) &&
			(f.Channel == 0 || channels[int64(m.ChannelID)] || channels[int64(parent)]) &&
			(f.Before == 0 || m.CreatedAt.UnixMicro() < f.Before)
	})
}
