package api

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// BotStatusFile is the file in the bot's spool directory where
// dsearch-bot leaves what an operator must know when it is not looking at
// the log: why the bot stopped for good, the channels it could not sync,
// the events its spool could not take. dsearch-bot --check and searchd
// doctor read it.
const BotStatusFile = "bot-status"

// BotStatus is the content of BotStatusFile.
type BotStatus struct {
	UpdatedAt time.Time `json:"updated_at"`
	// Stopped explains the gateway close that ended the bot (a close
	// Discord says not to reconnect after); empty once it connects again.
	Stopped   string     `json:"stopped,omitempty"`
	StoppedAt *time.Time `json:"stopped_at,omitempty"`
	// Incomplete lists the channels whose catch-up or history is not
	// done because Discord failed or refused.
	Incomplete []IncompleteChannel `json:"incomplete,omitempty"`
	// SpoolFailures counts the events (messages and deletions) the spool
	// could not take since the bot started; each opened a gap that a
	// catch-up fills. LastSpoolFailure is the latest cause.
	SpoolFailures    int64      `json:"spool_failures,omitempty"`
	LastSpoolFailure string     `json:"last_spool_failure,omitempty"`
	LastSpoolFailAt  *time.Time `json:"last_spool_failure_at,omitempty"`
}

// IncompleteChannel is a channel the bot could not sync yet.
type IncompleteChannel struct {
	Channel ID     `json:"channel"`
	Guild   ID     `json:"guild"`
	Name    string `json:"name,omitempty"`
	Why     string `json:"why"`
	// Retrying: the bot tries again (with a growing pause) while it runs;
	// otherwise only the next start or SIGHUP does.
	Retrying bool `json:"retrying"`
}

// ReadBotStatus reads the status the bot left in its spool directory; it
// returns nil and no error when there is none.
func ReadBotStatus(spoolDir string) (*BotStatus, error) {
	data, err := os.ReadFile(filepath.Join(spoolDir, BotStatusFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var s BotStatus
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, err
	}
	return &s, nil
}
