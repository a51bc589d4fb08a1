package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/diamondburned/arikawa/v3/discord"
	"github.com/diamondburned/arikawa/v3/gateway"
	"github.com/diamondburned/arikawa/v3/utils/httputil"

	"dsearch/shared/api"
	"dsearch/shared/client"
)

// progressFile keeps a full reconciliation's progress in the spool
// directory, so that one cut short resumes where it was.
const progressFile = "reconcile-progress"

// reconcileProgress is, per channel, where the full reconciliation is:
// the oldest message it reached (0: not started), or done.
type reconcileProgress struct {
	Started  time.Time                            `json:"started"`
	Channels map[discord.ChannelID]*channelCursor `json:"channels"`
}

type channelCursor struct {
	Before discord.MessageID `json:"before,omitempty"`
	Done   bool              `json:"done,omitempty"`
}

// Reconcile makes searchd match Discord for every readable channel of
// every allowed guild: it pages through each channel's whole history
// (100 messages a request, within Discord's rate limits, one request at
// a time), sends every message (edits win by their edit time) and
// deletes the stored messages Discord no longer has; channels and
// threads deleted on Discord are forgotten, and so are the servers the
// bot was removed from (as at a start: forgetLeftGuilds). Progress is saved after each
// page in the spool directory: run again after an interruption, it goes
// on where it stopped. It runs beside a running bot (it does not use the
// spool) and posts straight to searchd. It writes a line per channel to
// out.
func Reconcile(ctx context.Context, cfg Config, out io.Writer) error {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	cfg.Log = slog.New(RedactingHandler(cfg.Log.Handler()))
	if err := os.MkdirAll(cfg.SpoolDir, 0o700); err != nil {
		return err
	}
	// The Message Content intent brings no events; it is asked for so
	// that Discord refuses the session (4014) when the intent is off in
	// the Developer Portal: its REST pages would then hold no text, and
	// a message missed while the bot was away would be stored empty.
	st, err := dial(ctx, cfg, gateway.IntentGuilds|gateway.IntentMessageContent)
	if err != nil {
		return err
	}
	// The bot's marks say which servers it synced (forgetLeftGuilds).
	mk, err := readMarks(cfg.SpoolDir)
	if err != nil {
		return fmt.Errorf("sync marks: %w", err)
	}
	b := &Bot{cfg: cfg, log: cfg.Log, state: st, marks: mk}
	b.searchd = watched{Searchd: client.New(cfg.Socket), b: b}
	b.batch = &batcher{log: cfg.Log, maxItems: api.MaxBatchItems, marks: b.marks,
		put: func(mb *api.MessageBatch) error {
			_, err := retryFunc(ctx, b, func() (*api.BatchResult, error) { return b.searchd.PostMessages(ctx, mb) })
			return err
		}}
	if err := st.Open(ctx); err != nil {
		if fatal := fatalClose(err); fatal != nil {
			return fatal
		}
		return fmt.Errorf("discord gateway: %w", err)
	}
	defer st.Close()
	guilds, unavailable, err := b.waitGuilds(ctx)
	if err != nil {
		return err
	}

	path := filepath.Join(cfg.SpoolDir, progressFile)
	prog, err := loadProgress(path)
	if err != nil {
		return fmt.Errorf("reconcile progress %s: %w", path, err)
	}
	if prog.Started.IsZero() {
		prog.Started = time.Now().UTC()
	} else {
		fmt.Fprintf(out, "resuming the reconciliation begun %s\n", prog.Started.Local().Format(time.DateTime))
	}
	save := func() error {
		data, err := json.Marshal(prog)
		if err != nil {
			return err
		}
		return writeFileAtomic(path, data)
	}
	// A server still unavailable (a Discord outage) is not covered: the
	// run says so and fails, its progress kept, so that it is run again.
	failed := len(unavailable)
	for _, g := range unavailable {
		fmt.Fprintf(out, "server %s: unavailable on Discord (an outage?); not reconciled, run again to cover it\n", g)
	}
	var present []discord.GuildID
	for _, g := range b.state.Ready().Guilds {
		present = append(present, g.ID)
	}
	if n, err := b.forgetLeftGuilds(ctx, present); err != nil {
		failed++
		fmt.Fprintf(out, "cannot look for servers the bot was removed from, run again to go on: %s\n", Redact(err.Error()))
	} else if n > 0 {
		fmt.Fprintf(out, "servers the bot was removed from, forgotten: %d\n", n)
	}
	for _, g := range guilds {
		chans, missed, err := b.readableByBot(g)
		if err != nil {
			return fmt.Errorf("server %s: %w", g, err)
		}
		for _, m := range missed {
			fmt.Fprintf(out, "server %s: %s; run again to cover those threads\n", g, m.Topic)
		}
		b.batch.flush() // names and threads before their messages
		if n, err := b.forgetVanished(ctx, g, chans); err != nil {
			return err
		} else if n > 0 {
			fmt.Fprintf(out, "server %s: forgot %d channels deleted on Discord\n", g, n)
		}
		for _, ch := range chans {
			cur := prog.Channels[ch.ID]
			if cur == nil {
				cur = &channelCursor{}
				prog.Channels[ch.ID] = cur
			}
			if cur.Done {
				continue
			}
			n, err := b.reconcileChannel(ctx, ch, cur, save)
			switch {
			case ctx.Err() != nil:
				return fmt.Errorf("reconciliation interrupted (run it again to go on): %w", ctx.Err())
			case err != nil:
				failed++
				fmt.Fprintf(out, "#%s (%s): failed, run again to go on: %s\n", ch.Name, ch.ID, Redact(discordErr(err).Error()))
			default:
				fmt.Fprintf(out, "#%s (%s): %d messages reconciled\n", ch.Name, ch.ID, n)
			}
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d channels or servers not reconciled; run dsearch-bot --reconcile again to go on", failed)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	fmt.Fprintf(out, "reconciled %d channels of %d servers\n", len(prog.Channels), len(guilds))
	return nil
}

// waitGuilds waits until the gateway has delivered every allowed guild
// READY named, for guildWait at most: missing are those it has not (a
// Discord outage).
func (b *Bot) waitGuilds(ctx context.Context) (have, missing []discord.GuildID, err error) {
	want := b.state.Ready().Guilds
	deadline := time.Now().Add(guildWait)
	for {
		have, missing = nil, nil
		for _, g := range want {
			if !b.allowed(g.ID) {
				continue
			}
			if _, err := b.state.Cabinet.Guild(g.ID); err == nil {
				have = append(have, g.ID)
			} else {
				missing = append(missing, g.ID)
			}
		}
		if len(missing) == 0 || time.Now().After(deadline) {
			return have, missing, nil
		}
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// guildWait is how long --reconcile waits for the servers READY listed.
var guildWait = time.Minute

// reconcileChannel pages back through a channel's whole history from
// its cursor, reconciling each page and saving the cursor after it.
func (b *Bot) reconcileChannel(ctx context.Context, ch discord.Channel, cur *channelCursor, save func() error) (int, error) {
	rest := b.state.WithContext(ctx)
	n := 0
	for {
		msgs, err := rest.MessagesBefore(ch.ID, cur.Before, pageSize)
		if err != nil {
			return n, err
		}
		upTo := discord.MessageID(0)
		if cur.Before != 0 {
			upTo = cur.Before - 1
		}
		if err := b.reconcile(ctx, ch, msgs, len(msgs) < pageSize, upTo); err != nil {
			return n, err
		}
		n += len(msgs)
		if len(msgs) > 0 {
			cur.Before = msgs[len(msgs)-1].ID
		}
		cur.Done = len(msgs) < pageSize
		if err := save(); err != nil {
			return n, err
		}
		if cur.Done {
			return n, nil
		}
	}
}

func loadProgress(path string) (*reconcileProgress, error) {
	p := &reconcileProgress{Channels: map[discord.ChannelID]*channelCursor{}}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return p, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, p); err != nil {
		return nil, err
	}
	if p.Channels == nil {
		p.Channels = map[discord.ChannelID]*channelCursor{}
	}
	return p, nil
}

// forgetVanished forgets the channels and threads searchd holds for a
// guild that Discord says no longer exist: deleted while the bot was
// away. listed are the channels the bot reads now; each other stored
// channel the gateway does not know costs one REST request, and is
// forgotten on 404 Unknown Channel (403 means it exists, unreadable).
func (b *Bot) forgetVanished(ctx context.Context, g discord.GuildID, listed []discord.Channel) (int, error) {
	stored, err := retryFunc(ctx, b, func() (*api.GuildChannels, error) { return b.searchd.GuildChannels(ctx, api.ID(g)) })
	if err != nil {
		return 0, err
	}
	var gone []api.ID
	for _, id := range stored.Channels {
		ch := discord.ChannelID(id)
		if slices.ContainsFunc(listed, func(c discord.Channel) bool { return c.ID == ch }) {
			continue
		}
		if _, err := b.state.Cabinet.Channel(ch); err == nil {
			continue
		}
		_, err := b.state.WithContext(ctx).Client.Channel(ch)
		var he *httputil.HTTPError
		switch {
		case unknownChannel(err):
			gone = append(gone, id)
			b.marks.forget(ch)
		case err != nil && ctx.Err() == nil && !(errors.As(err, &he) && he.Status/100 == 4):
			// Discord did not answer: asked again until it does, as a
			// CHANNEL_DELETE is (deleted.go). A deletion queued before a
			// restart is known only from here, and nothing else asks.
			b.queueDeletion(deletion{g: g, ch: ch})
		}
	}
	if len(gone) > 0 {
		b.log.Info("forgetting channels deleted on Discord while the bot was away", "guild", g, "channels", len(gone))
		b.batch.forget(gone, nil)
		if b.status != nil { // a full reconciliation leaves the status to the bot
			b.noteStatus(b.status.forget(gone...))
		}
	}
	return len(gone), nil
}
