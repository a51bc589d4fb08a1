package server

import (
	"context"
	"net/http"
	"path/filepath"

	"dsearch/shared/api"
	"dsearch/shared/spoolforget"
)

// optOutStatus, optOut and optIn serve /v1/optouts/{user}: a member's
// choice to be left out of the index (sqlite.OptOut).
func (s *Server) optOutStatus(w http.ResponseWriter, r *http.Request) error {
	user, err := pathParamID(r, "user")
	if err != nil {
		return err
	}
	out, err := s.DB.OptedOut(r.Context(), user)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, api.OptOut{User: api.ID(user), OptedOut: out})
}

func (s *Server) optOut(w http.ResponseWriter, r *http.Request) error {
	user, err := pathParamID(r, "user")
	if err != nil {
		return err
	}
	n, err := s.DB.OptOut(r.Context(), user, s.Rules)
	if err != nil {
		return err
	}
	// Counts only: who opted out is theirs to tell.
	s.Log.Info("a member opted out", "messages_forgotten", n)
	s.forgetRejectedAuthor(r.Context(), user)
	if s.Embedding != nil && n > 0 {
		s.Embedding.Job.Kick() // their vectors go at once
	}
	return writeJSON(w, http.StatusOK, api.OptOut{User: api.ID(user), OptedOut: true, Forgotten: n})
}

func (s *Server) optIn(w http.ResponseWriter, r *http.Request) error {
	user, err := pathParamID(r, "user")
	if err != nil {
		return err
	}
	if _, err := s.DB.OptIn(r.Context(), user); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, api.OptOut{User: api.ID(user)})
}

// forgetRejectedAuthor takes an opted-out member's messages out of the
// batches searchd refused from the bot (BotSpool's rejected/): never
// stored, they would wait on disk for a person (a replay skips them). As
// searchd forget does, whoever asked (the bot, curl, a script); after the
// opt-out is recorded, so that a replay meanwhile is skipped. The opt-out
// itself is done: a failure here is the operator's to see, not the
// member's.
func (s *Server) forgetRejectedAuthor(ctx context.Context, user int64) {
	if s.BotSpool == "" {
		return
	}
	took, err := spoolforget.Rejected(s.BotSpool, func(m api.MessageUpsert, _ api.ID) bool {
		if m.ID == 0 {
			return false
		}
		if m.Author.ID == 0 && m.Partial {
			// A link preview's update names no author: it goes if its
			// message is deleted (the opt-out's tombstone). Were it
			// another's deleted earlier, it goes too: a replay skips it.
			deleted, err := s.DB.Deleted(context.WithoutCancel(ctx), []int64{int64(m.ID)})
			return err == nil && len(deleted) == 1
		}
		return int64(m.Author.ID) == user
	})
	if err != nil {
		s.Log.Error("an opt-out could not take the member out of the bot's refused batches: delete them, or opt out again", "dir", filepath.Join(s.BotSpool, "rejected"), "err", err)
	} else if took > 0 {
		s.Log.Info("an opted-out member's messages taken out of the bot's refused batches", "messages", took)
	}
}
