package server

import (
	"net/http"

	"dsearch/searchd/sqlite"
	"dsearch/shared/api"
)

func (s *Server) backfill(w http.ResponseWriter, r *http.Request) error {
	ch, err := pathParamID(r, "channel")
	if err != nil {
		return err
	}
	var through api.ID
	if v := r.URL.Query().Get("through"); v != "" && r.Method == http.MethodGet {
		if through, err = api.ParseID(v); err != nil || through < 0 {
			return errorf(http.StatusBadRequest, "through must be a message ID")
		}
	}
	b, err := s.DB.Backfill(r.Context(), ch, int64(through))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, api.Backfill{Channel: api.ID(ch), Before: api.ID(b.BeforeID),
		Complete: b.Complete, Newest: api.ID(b.NewestID), Through: through})
}

func (s *Server) setBackfill(w http.ResponseWriter, r *http.Request) error {
	ch, err := pathParamID(r, "channel")
	if err != nil {
		return err
	}
	// A checkpoint read from another database (a restore came between)
	// would say the restored one holds pages it lacks.
	if err := s.sameGeneration(r); err != nil {
		return err
	}
	var in api.Backfill
	if err := decode(r, &in); err != nil {
		return err
	}
	switch {
	case in.Channel != 0 && int64(in.Channel) != ch:
		return errorf(http.StatusBadRequest, "channel %s in the body differs from %d in the path", in.Channel, ch)
	case in.Before < 0:
		return errorf(http.StatusBadRequest, "before must not be negative")
	}
	if err := s.DB.SetBackfill(r.Context(), &sqlite.Backfill{ChannelID: ch, BeforeID: int64(in.Before), Complete: in.Complete}); err != nil {
		return err
	}
	return s.backfill(w, r)
}

// messageIDs lists a channel's stored message IDs in a range, for the
// bot's reconciliation with Discord.
func (s *Server) messageIDs(w http.ResponseWriter, r *http.Request) error {
	ch, err := pathParamID(r, "channel")
	if err != nil {
		return err
	}
	var from, to api.ID
	for _, p := range []struct {
		name string
		v    *api.ID
	}{{"from", &from}, {"to", &to}} {
		if *p.v, err = api.ParseID(r.URL.Query().Get(p.name)); err != nil || *p.v < 0 {
			return errorf(http.StatusBadRequest, "%s must be a message ID", p.name)
		}
	}
	ids, err := s.DB.MessageIDs(r.Context(), ch, int64(from), int64(to), api.MaxMessageIDs+1)
	if err != nil {
		return err
	}
	out := api.MessageIDs{IDs: make([]api.ID, 0, len(ids)), More: len(ids) > api.MaxMessageIDs}
	for _, id := range ids[:min(len(ids), api.MaxMessageIDs)] {
		out.IDs = append(out.IDs, api.ID(id))
	}
	return writeJSON(w, http.StatusOK, out)
}

// guildChannels lists the channels and threads stored for a guild, for
// the bot to find those deleted while it was away.
func (s *Server) guildChannels(w http.ResponseWriter, r *http.Request) error {
	g, err := pathParamID(r, "guild")
	if err != nil {
		return err
	}
	ids, err := s.DB.ChannelsOf(r.Context(), g, 0)
	if err != nil {
		return err
	}
	out := api.GuildChannels{Channels: make([]api.ID, len(ids))}
	for i, id := range ids {
		out.Channels[i] = api.ID(id)
	}
	return writeJSON(w, http.StatusOK, out)
}
