package api

import "time"

// GoneRequest asks searchd which of these IDs it no longer holds (POST
// /v1/gone): the bot's check of what its public answers still quote.
// IDs and times only, in and out: never text.
type GoneRequest struct {
	Messages []ID `json:"messages,omitempty"`
	Authors  []ID `json:"authors,omitempty"`
	Channels []ID `json:"channels,omitempty"`
	// Quoted asks which of these messages searchd holds edited later
	// than the version an answer quotes: an edit another process handed
	// searchd (dsearch-bot --reconcile, an import) may take quoted text
	// out, as the bot's own does.
	Quoted []Version `json:"quoted,omitempty"`
	// Deleted asks which of these messages searchd deleted or forgot
	// (holds their tombstone), and Forgotten which of these authors
	// searchd forget --author forgot, and when: the bot's check of the
	// batches searchd refused (SPOOL/rejected/), whose messages were
	// never stored, so that Messages would name them all.
	Deleted   []ID `json:"deleted,omitempty"`
	Forgotten []ID `json:"forgotten,omitempty"`
}

// Version is a message as an answer quoted it: its edit time then (zero:
// not edited), or, where the answer did not show it, when the answer was
// made.
type Version struct {
	ID       ID        `json:"id"`
	EditedAt time.Time `json:"edited_at"`
}

// Gone is the answer: of the IDs asked about, the messages searchd does
// not hold (deleted, forgotten, or never stored), the authors who opted
// out or whose every message and name it forgot, and the channels
// deleted on Discord (forgotten for good). A channel merely unknown is
// not gone: a thread's parent may never have been stored.
type Gone struct {
	Messages []ID `json:"messages"`
	Authors  []ID `json:"authors"`
	Channels []ID `json:"channels"`
	// Edited are the quoted messages searchd holds edited later than
	// asked, with their stored edit time (one answer may quote an older
	// version than another).
	Edited []Version `json:"edited"`
	// Deleted and Forgotten answer the request's: the messages searchd
	// holds a tombstone of, and the authors forgotten with the time
	// (EditedAt) they were.
	Deleted   []ID      `json:"deleted,omitempty"`
	Forgotten []Version `json:"forgotten,omitempty"`
}

// MaxGoneIDs is the most IDs, all six lists together, one POST
// /v1/gone may ask about.
const MaxGoneIDs = 10000

// IDs is the number of IDs the request asks about.
func (r *GoneRequest) IDs() int {
	return len(r.Messages) + len(r.Authors) + len(r.Channels) + len(r.Quoted) + len(r.Deleted) + len(r.Forgotten)
}

// OutdatedRequest names edits searchd refused, kept in the bot's
// SPOOL/rejected/ for a replay (POST /v1/outdated): a message stored in
// an older version than the edit (EditedAt) is dropped, without a
// tombstone, so that what the member edited away is not served while
// the edit waits, and the replay can still store it. IDs and times only.
type OutdatedRequest struct {
	Messages []Version `json:"messages"`
}

// Outdated is the answer: the messages dropped.
type Outdated struct {
	Dropped []ID `json:"dropped"`
}
