package bot

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/diamondburned/arikawa/v3/utils/ws"
)

// fatalCloses are the gateway close codes Discord documents as not to be
// reconnected after (discord.com/developers/docs/topics/opcodes-and-status-codes),
// with what the operator has to do. On any of them the bot exits non-zero.
var fatalCloses = map[int]string{
	4004: "authentication failed: the bot token was reset or revoked; put the new token in the file DSEARCH_TOKEN_FILE names and start the bot again",
	4010: "invalid shard: dsearch-bot connects as one shard, so this is a bug in dsearch-bot; please report it",
	4011: "sharding required: the bot is in too many servers for one connection (Discord requires sharding from 2,500); dsearch-bot does not shard, so run one bot per group of servers",
	4012: "invalid API version: this dsearch-bot speaks a gateway version Discord no longer serves; upgrade dsearch",
	4013: "invalid intents: dsearch-bot asked for intents Discord does not know, a bug; please report it",
	4014: "disallowed intents: the Message Content intent is switched off; turn it on in the Developer Portal (your application → Bot → Privileged Gateway Intents → Message Content Intent) and start the bot again",
}

// FatalCloseError is Run's error when Discord closed the gateway with a
// code it says not to reconnect after.
type FatalCloseError struct {
	Code int
}

func (e *FatalCloseError) Error() string {
	return fmt.Sprintf("Discord closed the gateway with code %d, %s", e.Code, fatalCloses[e.Code])
}

// fatalClose returns the FatalCloseError err holds, if any.
func fatalClose(err error) *FatalCloseError {
	var ce *ws.CloseEvent
	if errors.As(err, &ce) {
		if _, ok := fatalCloses[ce.Code]; ok {
			return &FatalCloseError{Code: ce.Code}
		}
	}
	return nil
}

func fatalCloseCodes() []int { return slices.Sorted(maps.Keys(fatalCloses)) }
