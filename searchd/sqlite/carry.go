package sqlite

import (
	"slices"

	"dsearch/searchd"
	"dsearch/searchd/segment"
)

// A live server applies one small batch after another, each in its own
// transaction; reading the channel's latest 50 lines again for each
// message would cost more than all the rest of placing it. So an applier
// leaves the next one the linker's windows (its channels' latest spoken
// lines, with their words and segments) and the names it read, and the
// next takes them while they are still what it would read itself:
//
//   - only a committed Apply leaves them, and only the next write takes
//     them (DB.writeCarrying): any other write drops them, except those
//     that change none of it (writeAside: vectors, summaries, leases,
//     backfill checkpoints, the text log's trimming);
//   - another connection's commit, of this process or another (an import
//     beside the server), moves PRAGMA data_version, which drops them;
//   - within Apply, an edit or a deletion drops its channel's window, a
//     re-segmentation its channel's (as it always did within a batch),
//     and a batch author's new name every window (renamed).

// carried is what one Apply leaves the next.
type carried struct {
	linker  *segment.Linker // the windows were read for this linker
	recent  map[int64][]segment.Line
	names   map[member]string
	version int64 // PRAGMA data_version when it was left
}

// carriedChannels bounds the channels whose windows are carried (a live
// server's busy ones; an import of many channels carries none).
const carriedChannels = 256

// resume takes what the previous batch's applier left, if it was made
// for the same linker.
func (a *applier) resume(c *carried) {
	if c == nil || a.rules.Linker == nil || c.linker != a.rules.Linker {
		return
	}
	a.recent, a.names, a.resumed = c.recent, c.names, true
}

// leave returns what this applier carries to the next batch's.
func (a *applier) leave() *carried {
	if a.rules.Linker == nil || len(a.recent) == 0 || len(a.recent) > carriedChannels {
		return nil
	}
	return &carried{linker: a.rules.Linker, recent: a.recent, names: a.names}
}

// renamed reads again the names of the batch's authors that carried lines
// know (every author of a carried line is in a.names): after a rename,
// every carried window goes, as its lines hold the old name.
func (a *applier) renamed(msgs []searchd.Message) error {
	if !a.resumed {
		return nil
	}
	var seen []member
	for i := range msgs {
		guild, err := a.guildOf(msgs[i].ChannelID)
		if err != nil {
			return err
		}
		u := member{guild, msgs[i].Author.ID}
		old, known := a.names[u]
		if !known || slices.Contains(seen, u) {
			continue
		}
		seen = append(seen, u)
		delete(a.names, u)
		name, err := a.nameOf(u)
		if err != nil {
			return err
		}
		if name != old {
			clear(a.recent)
		}
	}
	return nil
}
