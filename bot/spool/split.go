package spool

import (
	"encoding/json"

	"dsearch/shared/api"
)

// maxBatchBytes bounds a batch's messages in JSON: searchd refuses a body
// over 8 MiB (docs/api.md), and a thousand messages with long embeds can
// be.
const maxBatchBytes = 4 << 20

// Split cuts a batch into batches of at most n items (and maxBatchBytes of
// messages), in the order searchd applies them: places, messages,
// deletions, forgotten places.
func Split(b *api.MessageBatch, n int) []*api.MessageBatch {
	out := []*api.MessageBatch{{}}
	count, size := 0, 0
	next := func() *api.MessageBatch { // the batch with room for one more
		if count == n {
			out, count, size = append(out, &api.MessageBatch{}), 0, 0
		}
		count++
		return out[len(out)-1]
	}
	for _, g := range b.Guilds {
		cur := next()
		cur.Guilds = append(cur.Guilds, g)
	}
	for _, c := range b.Channels {
		cur := next()
		cur.Channels = append(cur.Channels, c)
	}
	for _, m := range b.Messages {
		// And within searchd's body limit: a batch over it is refused
		// whole as malformed, with the deletions it carries.
		j, _ := json.Marshal(m)
		if size+len(j) > maxBatchBytes && count > 0 {
			count = n
		}
		cur := next()
		cur.Messages = append(cur.Messages, m)
		size += len(j)
	}
	for _, d := range b.Deletes {
		cur := next()
		cur.Deletes = append(cur.Deletes, d)
	}
	for _, c := range b.ForgetChannels {
		cur := next()
		cur.ForgetChannels = append(cur.ForgetChannels, c)
	}
	for _, g := range b.ForgetGuilds {
		cur := next()
		cur.ForgetGuilds = append(cur.ForgetGuilds, g)
	}
	if count == 0 {
		return nil
	}
	return out
}
