package api

// GoneRequest asks searchd which of these IDs it no longer holds (POST
// /v1/gone): the bot's check of what its public answers still quote.
// IDs only, in and out: never text.
type GoneRequest struct {
	Messages []ID `json:"messages,omitempty"`
	Authors  []ID `json:"authors,omitempty"`
	Channels []ID `json:"channels,omitempty"`
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
}

// MaxGoneIDs is the most IDs, all three lists together, one POST
// /v1/gone may ask about.
const MaxGoneIDs = 10000

// IDs is the number of IDs the request asks about.
func (r *GoneRequest) IDs() int { return len(r.Messages) + len(r.Authors) + len(r.Channels) }
