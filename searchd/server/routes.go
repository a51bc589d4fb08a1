package server

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"dsearch/searchd"
	"dsearch/searchd/sqlite"
	"dsearch/shared/api"
)

func (s *Server) health(w http.ResponseWriter, r *http.Request) error {
	v, err := s.DB.SchemaVersion(r.Context())
	if err != nil {
		return err
	}
	g, err := s.DB.Generation(r.Context())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, api.Health{OK: true, Version: s.Version, SchemaVersion: v, Generation: g})
}

func (s *Server) stats(w http.ResponseWriter, r *http.Request) error {
	st, err := s.DB.Stats(r.Context())
	if err != nil {
		return err
	}
	out := StatsResponse(st)
	if e := s.Embedding; e != nil {
		c, err := s.DB.EmbeddingCounts(r.Context())
		if err != nil {
			return err
		}
		js := e.Job.Status()
		out.Embedding = &api.EmbeddingStats{Model: e.Model, Backend: e.Backend, Dimension: e.Dim, Phase: js.Phase,
			Segments: c.Segments, SegmentsEmbedded: c.SegmentsDone, SegmentsTooShort: c.SegmentsTooShort, SegmentsPooled: c.SegmentsPooled,
			Messages: c.Messages, MessagesEmbedded: c.MessagesDone, MessagesTooShort: c.MessagesTooShort,
			VectorsInMemory: e.Matrix.Len(), SegmentsPerSecond: js.SegmentsPerSec, MessagesPerSecond: js.MsgsPerS,
			ETASeconds: js.ETA.Seconds(), Elsewhere: js.Elsewhere, LastError: js.LastError}
	}
	return writeJSON(w, http.StatusOK, out)
}

// StatsResponse converts database stats to the API's form.
func StatsResponse(st *sqlite.Stats) api.Stats {
	out := api.Stats{
		Guilds: st.Guilds, Channels: st.Channels, Users: st.Users, Messages: st.Messages,
		Segments: st.Segments, OverlappingSegs: st.OverlappingSegments,
		GapQuantiles: []api.GapQuant{}, SegmentSizes: []api.SizeQuant{},
	}
	if st.Messages > 0 {
		first, last := usTime(st.FirstAt), usTime(st.LastAt)
		out.FirstMessageAt, out.LastMessageAt = &first, &last
	}
	for _, q := range sqlite.Quantiles {
		if len(st.Gaps) > 0 {
			out.GapQuantiles = append(out.GapQuantiles, api.GapQuant{Quantile: q, Seconds: float64(sqlite.Quantile(st.Gaps, q)) / 1e6})
		}
		if len(st.Sizes) > 0 {
			out.SegmentSizes = append(out.SegmentSizes, api.SizeQuant{Quantile: q, Messages: sqlite.Quantile(st.Sizes, q)})
		}
	}
	return out
}

func (s *Server) postMessages(w http.ResponseWriter, r *http.Request) error {
	// A batch naming the generation its sender checked is stored only in
	// that database: a restore between the bot's check and its post would
	// otherwise take it as if nothing had changed, and its messages would
	// move the bot's marks past the hole the restore left.
	if err := s.sameGeneration(r); err != nil {
		return err
	}
	var in api.MessageBatch
	if err := decode(r, &in); err != nil {
		// An unknown field is a bot newer than this searchd: the batch
		// may pass once searchd is upgraded. Anything else is the
		// batch's own fault.
		if strings.Contains(err.Error(), "unknown field") {
			return err
		}
		return badBatch(err)
	}
	b, err := toBatch(&in)
	if err != nil {
		return badBatch(err)
	}
	res, err := s.DB.Apply(r.Context(), b, s.Rules, nil)
	if err != nil {
		return err
	}
	forgot, forgotChannels, err := s.forgetPlaces(r.Context(), &in)
	if err != nil {
		return err
	}
	res.Deleted += forgot
	s.forgetRejected(removedBy(&in, &res, forgotChannels))
	s.Log.Info("messages applied", "inserted", res.Inserted, "updated", res.Updated, "deleted", res.Deleted, "truncated", res.Truncated)
	if res.Conflicts > 0 {
		s.Log.Warn("messages refused: their IDs are stored in another channel", "count", res.Conflicts, "ids", res.ConflictIDs)
	}
	if s.Embedding != nil && res.Inserted+res.Updated+res.Deleted > 0 {
		s.Embedding.Job.Kick()
	}
	return writeJSON(w, http.StatusOK, api.BatchResult{Inserted: res.Inserted, Updated: res.Updated,
		Unchanged: res.Unchanged, Deleted: res.Deleted, Skipped: res.Skipped, Truncated: res.Truncated, Conflicts: res.Conflicts,
		ForgotChannels: forgotChannels, UpdatedIDs: apiIDs(res.UpdatedIDs)})
}

// sameGeneration refuses a write naming another database generation
// than the one served (api.GenerationHeader; one naming none passes): a
// restore came between the sender's look at the database and its write.
// The database cannot change under a running searchd (restore needs it
// stopped).
func (s *Server) sameGeneration(r *http.Request) error {
	want := r.Header.Get(api.GenerationHeader)
	if want == "" {
		return nil
	}
	g, err := s.DB.Generation(r.Context())
	if err != nil {
		return err
	}
	if want != g {
		return &httpError{status: http.StatusConflict, code: api.CodeStaleGeneration,
			msg: "searchd serves another database than the one checked (restored since): check again, then send it again"}
	}
	return nil
}

// toBatch validates a request batch and converts it.
func toBatch(in *api.MessageBatch) (*searchd.Batch, error) {
	if n := in.Items(); n == 0 {
		return nil, errorf(http.StatusBadRequest, "empty batch")
	} else if n > api.MaxBatchItems {
		return nil, errorf(http.StatusBadRequest, "batch has %d items; at most %d", n, api.MaxBatchItems)
	}
	var b searchd.Batch
	for i, g := range in.Guilds {
		if g.ID == 0 {
			return nil, errorf(http.StatusBadRequest, "guilds[%d]: id is required", i)
		}
		b.Guilds = append(b.Guilds, searchd.Guild{ID: int64(g.ID), Name: g.Name})
	}
	for i, c := range in.Channels {
		if c.ID == 0 {
			return nil, errorf(http.StatusBadRequest, "channels[%d]: id is required", i)
		}
		b.Channels = append(b.Channels, searchd.Channel{ID: int64(c.ID), GuildID: int64(c.GuildID),
			ParentID: int64(c.ParentID), Name: c.Name, Kind: c.Kind, Topic: c.Topic})
	}
	seen := map[api.ID]bool{}
	for i, m := range in.Messages {
		switch {
		case m.ID == 0:
			return nil, errorf(http.StatusBadRequest, "messages[%d]: id is required", i)
		case seen[m.ID]:
			return nil, errorf(http.StatusBadRequest, "messages[%d]: id %s appears twice", i, m.ID)
		case m.ChannelID == 0:
			return nil, errorf(http.StatusBadRequest, "messages[%d]: channel_id is required", i)
		case m.Author.ID == 0 && !m.Partial: // Discord's link preview updates name no author
			return nil, errorf(http.StatusBadRequest, "messages[%d]: author.id is required", i)
		case m.CreatedAt.IsZero():
			return nil, errorf(http.StatusBadRequest, "messages[%d]: created_at is required", i)
		case !utf8.ValidString(m.Content):
			return nil, errorf(http.StatusBadRequest, "messages[%d]: content is not valid UTF-8", i)
		case slices.ContainsFunc(m.Embeds, func(e api.Embed) bool { return !utf8.ValidString(e.Title + e.Description) }):
			return nil, errorf(http.StatusBadRequest, "messages[%d]: an embed is not valid UTF-8", i)
		case m.Attachments < 0:
			return nil, errorf(http.StatusBadRequest, "messages[%d]: attachments must not be negative", i)
		}
		seen[m.ID] = true
		if m.GuildID != 0 {
			b.Channels = append(b.Channels, searchd.Channel{ID: int64(m.ChannelID), GuildID: int64(m.GuildID)})
		}
		msg := searchd.Message{
			ID: int64(m.ID), ChannelID: int64(m.ChannelID), CreatedAt: m.CreatedAt.UnixMicro(),
			Content: m.Content, Type: m.Type, ReplyToID: int64(m.ReplyToID), Attachments: m.Attachments, Partial: m.Partial,
			Embeds: m.Embeds,
			Author: searchd.Author{ID: int64(m.Author.ID), Username: m.Author.Username,
				GlobalName: m.Author.GlobalName, Nickname: m.Author.Nickname, Bot: m.Author.Bot},
		}
		if msg.Type == "" && !m.Partial { // a partial update keeps the stored type
			msg.Type = "Default"
		}
		if m.EditedAt != nil {
			msg.EditedAt = m.EditedAt.UnixMicro()
		}
		for _, u := range m.Mentions {
			msg.Mentions = append(msg.Mentions, int64(u))
		}
		b.Messages = append(b.Messages, msg)
	}
	for i, id := range in.Deletes {
		if id == 0 {
			return nil, errorf(http.StatusBadRequest, "deletes[%d]: id is required", i)
		}
		b.Deletes = append(b.Deletes, int64(id))
	}
	for i, id := range append(in.ForgetChannels, in.ForgetGuilds...) {
		if id == 0 {
			return nil, errorf(http.StatusBadRequest, "forget[%d]: id is required", i)
		}
	}
	return &b, nil
}

// forgetPlaces forgets the channels (with their threads) and guilds a
// batch names, as searchd forget --channel does: deleted on Discord, or
// the bot removed from them. A deleted channel is forgotten for good
// (sqlite.DB.ForgetDeletedChannels); a guild's messages come back if the
// bot is added to it again (sqlite.DB.ForgetLeftGuild). It returns how
// many messages it forgot, and the deleted channels with their threads.
func (s *Server) forgetPlaces(ctx context.Context, in *api.MessageBatch) (int, []api.ID, error) {
	var deleted []int64
	for _, c := range in.ForgetChannels {
		deleted = append(deleted, int64(c))
	}
	deleted, err := s.DB.WithTheirThreads(ctx, deleted)
	if err != nil {
		return 0, nil, err
	}
	n := 0
	for _, g := range in.ForgetGuilds {
		forgot, err := s.DB.ForgetLeftGuild(ctx, int64(g), s.Rules)
		n += forgot
		if err != nil {
			return n, nil, err
		}
	}
	if len(deleted) > 0 {
		forgot, err := s.DB.ForgetDeletedChannels(ctx, deleted, s.Rules)
		n += forgot
		if err != nil {
			return n, nil, err
		}
	}
	ids := make([]api.ID, len(deleted))
	for i, c := range deleted {
		ids[i] = api.ID(c)
	}
	if n > 0 {
		// Their traces leave the file at serve's next purge: a server that
		// deletes channels often would otherwise rewrite its keyword
		// index each time.
		s.Log.Info("forgot channels and servers", "channels", len(deleted), "servers", len(in.ForgetGuilds), "messages", n)
	}
	return n, ids, nil
}

// apiIDs is ids as the API writes them.
func apiIDs(ids []int64) []api.ID {
	out := make([]api.ID, len(ids))
	for i, id := range ids {
		out[i] = api.ID(id)
	}
	return out
}

func (s *Server) message(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	before, err := intParam(r, "before", 0, maxNeighbours)
	if err != nil {
		return err
	}
	after, err := intParam(r, "after", 0, maxNeighbours)
	if err != nil {
		return err
	}
	m, err := s.DB.Message(r.Context(), id)
	if err != nil {
		return err
	}
	prev, next, err := s.DB.Neighbours(r.Context(), m, before, after)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, api.MessageContext{Message: APIMessage(m), Before: apiMessages(prev), After: apiMessages(next)})
}

func (s *Server) segment(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	seg, msgs, err := s.DB.Segment(r.Context(), id, maxSegmentMsgs)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, api.Segment{
		ID: seg.ID, ChannelID: api.ID(seg.ChannelID), StartAt: usTime(seg.StartAt), EndAt: usTime(seg.EndAt),
		MessageCount: seg.MessageCount, Revision: seg.Revision, Messages: apiMessages(msgs),
		Truncated: seg.MessageCount > len(msgs),
	})
}

// APIMessage converts a stored message to the API's form.
func APIMessage(m *sqlite.StoredMessage) api.Message {
	out := api.Message{
		ID: api.ID(m.ID), GuildID: api.ID(m.GuildID), ChannelID: api.ID(m.ChannelID), AuthorID: api.ID(m.AuthorID),
		AuthorName: m.AuthorName, CreatedAt: usTime(m.CreatedAt), Content: m.Content, Type: m.Type,
		ReplyToID: api.ID(m.ReplyToID), Attachments: m.Attachments, SegmentID: m.SegmentID,
		URL: api.JumpURL(api.ID(m.GuildID), api.ID(m.ChannelID), api.ID(m.ID)),
	}
	if m.EditedAt != 0 {
		t := usTime(m.EditedAt)
		out.EditedAt = &t
	}
	return out
}

func apiMessages(ms []sqlite.StoredMessage) []api.Message {
	out := make([]api.Message, len(ms))
	for i := range ms {
		out[i] = APIMessage(&ms[i])
	}
	return out
}

func usTime(us int64) time.Time { return time.UnixMicro(us).UTC() }
