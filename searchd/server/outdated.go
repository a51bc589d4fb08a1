package server

import (
	"net/http"

	"dsearch/searchd"
	"dsearch/shared/api"
)

// outdated serves POST /v1/outdated: the bot names the edits searchd
// refused, kept in its SPOOL/rejected/ for a person and a replay, and
// searchd drops each message it holds in an older version
// (searchd.Batch.Outdated). The member edited that text away: serving it
// until someone replays would keep it shown. No tombstone: the replay
// stores the edit.
func (s *Server) outdated(w http.ResponseWriter, r *http.Request) error {
	var in api.OutdatedRequest
	if err := decode(r, &in); err != nil {
		return err
	}
	if n := len(in.Messages); n > api.MaxGoneIDs {
		return errorf(http.StatusBadRequest, "%d messages; at most %d", n, api.MaxGoneIDs)
	}
	var b searchd.Batch
	for i, v := range in.Messages {
		if v.ID == 0 || v.EditedAt.IsZero() {
			return errorf(http.StatusBadRequest, "messages[%d]: id and edited_at are required", i)
		}
		b.Outdated = append(b.Outdated, searchd.Outdated{ID: int64(v.ID), EditedAt: v.EditedAt.UnixMicro()})
	}
	res, err := s.DB.Apply(r.Context(), &b, s.Rules, nil)
	if err != nil {
		return err
	}
	if len(res.DroppedIDs) > 0 {
		// Counts only.
		s.Log.Info("messages stored in a version older than an edit searchd refused dropped until the edit is replayed", "messages", len(res.DroppedIDs))
		if s.Embedding != nil {
			s.Embedding.Job.Kick()
		}
	}
	return writeJSON(w, http.StatusOK, api.Outdated{Dropped: apiIDs(res.DroppedIDs)})
}
