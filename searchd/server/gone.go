package server

import (
	"net/http"

	"dsearch/shared/api"
)

// gone serves POST /v1/gone: which of the IDs the bot's public answers
// quote searchd no longer holds, or holds edited since quoted (api.Gone).
// IDs and times in and out; whatever removed or edited them (a batch, an
// opt-out, searchd forget, a reconciliation). The bot asks the same about
// its refused batches (Deleted, Forgotten: their messages were never
// stored).
func (s *Server) gone(w http.ResponseWriter, r *http.Request) error {
	var in api.GoneRequest
	if err := decode(r, &in); err != nil {
		return err
	}
	if n := in.IDs(); n > api.MaxGoneIDs {
		return errorf(http.StatusBadRequest, "%d IDs; at most %d", n, api.MaxGoneIDs)
	}
	ids := func(in []api.ID) []int64 {
		out := make([]int64, len(in))
		for i, id := range in {
			out[i] = int64(id)
		}
		return out
	}
	m, a, c, err := s.DB.Gone(r.Context(), ids(in.Messages), ids(in.Authors), ids(in.Channels))
	if err != nil {
		return err
	}
	quoted, after := make([]int64, len(in.Quoted)), make([]int64, len(in.Quoted))
	for i, v := range in.Quoted {
		quoted[i] = int64(v.ID)
		if !v.EditedAt.IsZero() {
			after[i] = v.EditedAt.UnixMicro()
		}
	}
	e, at, err := s.DB.EditedAfter(r.Context(), quoted, after)
	if err != nil {
		return err
	}
	edited := make([]api.Version, len(e))
	for i := range e {
		edited[i] = api.Version{ID: api.ID(e[i]), EditedAt: usTime(at[i])}
	}
	deleted, err := s.DB.Deleted(r.Context(), ids(in.Deleted))
	if err != nil {
		return err
	}
	users, when, err := s.DB.ForgottenAuthors(r.Context(), ids(in.Forgotten))
	if err != nil {
		return err
	}
	var forgotten []api.Version
	for i := range users {
		forgotten = append(forgotten, api.Version{ID: api.ID(users[i]), EditedAt: usTime(when[i])})
	}
	return writeJSON(w, http.StatusOK, api.Gone{Messages: apiIDs(m), Authors: apiIDs(a), Channels: apiIDs(c), Edited: edited,
		Deleted: apiIDs(deleted), Forgotten: forgotten})
}
