package api

// OptOut is a member's choice to be left out of the index: the response of
// GET, PUT (opt out) and DELETE (opt back in) /v1/optouts/{user}. Opting
// out forgets every stored message of theirs and every name they were
// seen under, tombstones kept so that no backfill or import brings them
// back, and skips whatever of theirs arrives later. Opting back in stores
// what they post from then on; what was forgotten stays forgotten.
type OptOut struct {
	User     ID   `json:"user"`
	OptedOut bool `json:"opted_out"`
	// Forgotten is the number of messages the PUT forgot.
	Forgotten int `json:"forgotten,omitempty"`
}
