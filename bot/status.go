package bot

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/diamondburned/arikawa/v3/discord"

	"dsearch/shared/api"
)

// status keeps api.BotStatus in the spool directory, for --check and
// searchd doctor.
type status struct {
	path string

	mu sync.Mutex
	s  api.BotStatus
	// parents holds each incomplete thread's channel: a channel deleted
	// on Discord takes its threads with it, and no event comes for them.
	parents map[api.ID]api.ID
}

func newStatus(dir string) *status {
	st := &status{path: filepath.Join(dir, api.BotStatusFile)}
	if old, err := api.ReadBotStatus(dir); err == nil && old != nil {
		st.s.Stopped, st.s.StoppedAt = old.Stopped, old.StoppedAt // until the bot connects
	}
	return st
}

// update changes the status and writes it.
func (st *status) update(f func(s *api.BotStatus)) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	f(&st.s)
	for th := range st.parents { // only the incomplete threads' are kept
		if !slices.ContainsFunc(st.s.Incomplete, func(c api.IncompleteChannel) bool { return c.Channel == th }) {
			delete(st.parents, th)
		}
	}
	st.s.UpdatedAt = time.Now().UTC()
	data, err := json.MarshalIndent(&st.s, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(st.path, data)
}

func (st *status) incomplete(ch discord.Channel, why string, retrying bool) error {
	return st.update(func(s *api.BotStatus) {
		s.Incomplete = slices.DeleteFunc(s.Incomplete, func(c api.IncompleteChannel) bool { return c.Channel == api.ID(ch.ID) })
		s.Incomplete = append(s.Incomplete, api.IncompleteChannel{Channel: api.ID(ch.ID), Guild: api.ID(ch.GuildID),
			Name: ch.Name, Why: Redact(why), Retrying: retrying})
		if isThread(ch.Type) && ch.ParentID.IsValid() {
			if st.parents == nil {
				st.parents = map[api.ID]api.ID{}
			}
			st.parents[api.ID(ch.ID)] = api.ID(ch.ParentID)
		}
	})
}

// forget drops the channels deleted on Discord, with their threads: an
// entry names a channel members named, and would stay for good.
func (st *status) forget(chs ...api.ID) error {
	gone := func(c api.IncompleteChannel) bool {
		return slices.Contains(chs, c.Channel) || slices.Contains(chs, st.parents[c.Channel])
	}
	st.mu.Lock()
	found := slices.ContainsFunc(st.s.Incomplete, gone)
	st.mu.Unlock()
	if !found {
		return nil
	}
	return st.update(func(s *api.BotStatus) { s.Incomplete = slices.DeleteFunc(s.Incomplete, gone) })
}

func (st *status) complete(ch discord.ChannelID) error {
	st.mu.Lock()
	found := slices.ContainsFunc(st.s.Incomplete, func(c api.IncompleteChannel) bool { return c.Channel == api.ID(ch) })
	st.mu.Unlock()
	if !found {
		return nil
	}
	return st.update(func(s *api.BotStatus) {
		s.Incomplete = slices.DeleteFunc(s.Incomplete, func(c api.IncompleteChannel) bool { return c.Channel == api.ID(ch) })
	})
}

// forgetGuild drops the incomplete channels of a guild the bot left.
func (st *status) forgetGuild(g discord.GuildID) error {
	return st.update(func(s *api.BotStatus) {
		s.Incomplete = slices.DeleteFunc(s.Incomplete, func(c api.IncompleteChannel) bool { return c.Guild == api.ID(g) })
	})
}
