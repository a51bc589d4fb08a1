package server

import (
	"net/http"

	"dsearch/shared/api"
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
