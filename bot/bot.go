// Package bot is the Discord side of dsearch: it keeps searchd's copy of
// the server current (live events through an on-disk spool, history by
// backfill) and answers /query, /catchup and "Find related conversations"
// with only what the asking member may read. It talks to searchd through
// shared/client alone: no model, database or LLM lives here.
package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	dapi "github.com/diamondburned/arikawa/v3/api"
	"github.com/diamondburned/arikawa/v3/discord"
	"github.com/diamondburned/arikawa/v3/gateway"
	"github.com/diamondburned/arikawa/v3/session"
	"github.com/diamondburned/arikawa/v3/state"
	"github.com/diamondburned/arikawa/v3/state/store/defaultstore"
	"github.com/diamondburned/arikawa/v3/utils/handler"
	"github.com/diamondburned/arikawa/v3/utils/httputil"
	"github.com/diamondburned/arikawa/v3/utils/httputil/httpdriver"

	"dsearch/bot/spool"
	"dsearch/shared/api"
	"dsearch/shared/client"
)

// Intents the bot needs. MessageContent is privileged: turn it on in the
// Developer Portal (Bot → Privileged Gateway Intents), or Discord closes
// the gateway with 4014 (fatal.go); REST pages would hold no text.
const Intents = gateway.IntentGuilds | gateway.IntentGuildMessages | gateway.IntentMessageContent

// Config is what the bot needs to run.
type Config struct {
	Token    string // the bot token, without "Bot "
	Socket   string // searchd's socket
	SpoolDir string
	SpoolMax int64 // bytes
	// Guilds, when not empty, is the allowlist: other servers are ignored.
	Guilds []discord.GuildID
	// Backfill pages through every readable channel's history on start.
	Backfill bool
	// PageSize is the number of results per reply page.
	PageSize int
	// FlushEvery and BatchItems bound how long and how many live events
	// wait before going to searchd.
	FlushEvery time.Duration
	BatchItems int
	// Transport carries every Discord REST request; nil is the default.
	// Tests point it at a fake Discord.
	Transport http.RoundTripper
	Log       *slog.Logger
	// ReconnectDelay is the first pause before reconnecting to the
	// gateway (it grows with each try); zero is arikawa's 4 s. Tests make
	// it short.
	ReconnectDelay time.Duration
	// RetryAfter is the first pause before a channel Discord failed on is
	// tried again (doubling up to 30 minutes); zero is 30 s.
	RetryAfter time.Duration
	// AnswerCheckEvery is how often the bot asks searchd whether its
	// public answers quote what it no longer holds (answercheck.go);
	// zero is 5 minutes. Tests make it short.
	AnswerCheckEvery time.Duration
}

// Searchd is what the bot asks of searchd; shared/client's socket client
// implements it.
type Searchd interface {
	PostMessages(context.Context, *api.MessageBatch) (*api.BatchResult, error)
	// PostMessagesIn names the database generation checked before it
	// (api.GenerationHeader).
	PostMessagesIn(ctx context.Context, generation string, mb *api.MessageBatch) (*api.BatchResult, error)
	Query(context.Context, *api.QueryRequest) (*api.QueryResponse, error)
	Search(context.Context, url.Values) (*api.SearchResponse, error)
	Catchup(context.Context, *api.CatchupRequest) (*api.CatchupResponse, error)
	Message(ctx context.Context, id api.ID, before, after int) (*api.MessageContext, error)
	Backfill(context.Context, api.ID) (*api.Backfill, error)
	BackfillThrough(ctx context.Context, channel, through api.ID) (*api.Backfill, error)
	SetBackfill(context.Context, *api.Backfill) error
	// SetBackfillIn names the database generation the checkpoint was read
	// from (api.GenerationHeader).
	SetBackfillIn(ctx context.Context, generation string, cp *api.Backfill) error
	OptOut(context.Context, api.ID) (*api.OptOut, error)
	OptIn(context.Context, api.ID) (*api.OptOut, error)
	OptOutStatus(context.Context, api.ID) (*api.OptOut, error)
	MessageIDs(ctx context.Context, channel, from, to api.ID) (*api.MessageIDs, error)
	GuildChannels(context.Context, api.ID) (*api.GuildChannels, error)
	Channels(context.Context) ([]api.Channel, error)
	Gone(context.Context, *api.GoneRequest) (*api.Gone, error)
	Outdated(context.Context, *api.OutdatedRequest) (*api.Outdated, error)
	Health(context.Context) (*api.Health, error)
}

var _ Searchd = (*client.Client)(nil)

// ErrBadToken is New's error when Discord refuses the token: retrying
// cannot help. Any other error (Discord unreachable) may pass.
var ErrBadToken = errors.New("Discord refused the bot token (401): check the file DSEARCH_TOKEN_FILE names")

// Bot is a running Discord bot.
type Bot struct {
	cfg     Config
	log     *slog.Logger
	state   *state.State
	searchd Searchd
	spool   *spool.Spool
	// taken counts the batches searchd took (watched): one it refuses
	// while this moves is refused for its own content (postPage).
	taken atomic.Uint64
	// asideOpen counts the refused batches being split; asideSeen holds
	// what searchd removed meanwhile (watchRemovals).
	asideMu   sync.Mutex
	asideOpen int
	asideSeen []*removal
	batch     *batcher
	pages     *pages
	marks     *marks
	status    *status
	answers   *answers // what public answers quote (answers.go)
	syncing   syncing  // channels whose sync has not ended (syncing.go)

	// guildQueue holds the guilds to catch up and page through (queued
	// tells), retryQueue channels to try again; gapped says the spool
	// could not take some channels' messages, which lost lists.
	queueMu    sync.Mutex
	guildQueue []discord.GuildID
	// listingAttempts counts a guild's failed thread listings in a row,
	// for the pause before it is listed again (threadListings).
	listingAttempts map[discord.GuildID]int
	queued          chan struct{}
	retryQueue      chan retry
	gapped          chan struct{}
	lostMu          sync.Mutex
	lost            map[discord.ChannelID]discord.GuildID
	// noAccess are the channels to catch up once the bot may read them
	// again: it could not, or could not tell, when last asked
	// (recheckAccess).
	accessMu sync.Mutex
	noAccess map[discord.ChannelID]bool

	// deletions are the CHANNEL_DELETEs and THREAD_DELETEs to confirm
	// with Discord (deleted.go); deletionKick tells.
	deletionMu   sync.Mutex
	deletions    []deletion
	deletionKick chan struct{}

	// generationMu: one post at a time checks whether searchd's database
	// was replaced (restored.go), the others wait for its marks.
	generationMu sync.Mutex

	// spoolWait, when set (tests), is called while a catch-up waits for
	// the spool (spooledFirst); spoolStuckAfter, when set (tests), stands
	// for spoolStuckAfter.
	spoolWait       func()
	spoolStuckAfter time.Duration

	// present carries the guilds each READY lists, for forgetLeftGuilds
	// (the newest list wins).
	present chan []discord.GuildID

	mu       sync.Mutex
	commands map[discord.GuildID]bool // guilds whose commands are registered
	active   sync.WaitGroup
}

// New connects to Discord's REST API (not yet the gateway) and opens the
// spool.
func New(ctx context.Context, cfg Config) (_ *Bot, err error) {
	if cfg.Token == "" {
		return nil, errors.New("no bot token: set DSEARCH_TOKEN_FILE (a 0600 file) or DSEARCH_TOKEN")
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	cfg.Log = slog.New(RedactingHandler(cfg.Log.Handler()))
	cfg.PageSize = cmpOr(cfg.PageSize, 5)
	cfg.FlushEvery = cmpOr(cfg.FlushEvery, time.Second)
	cfg.BatchItems = cmpOr(cfg.BatchItems, 100)
	cfg.SpoolMax = cmpOr(cfg.SpoolMax, 256<<20)
	cfg.RetryAfter = cmpOr(cfg.RetryAfter, 30*time.Second)
	sp, err := spool.Open(cfg.SpoolDir, cfg.SpoolMax, cfg.Log)
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	defer func() {
		if err != nil {
			sp.Close() // its lock: connect tries New again
		}
	}()
	mk, err := loadMarks(cfg.SpoolDir)
	if err != nil {
		return nil, fmt.Errorf("sync marks: %w", err)
	}
	ans, err := loadAnswers(cfg.SpoolDir, cfg.Log)
	if err != nil {
		return nil, fmt.Errorf("public answers: %w", err)
	}
	st, err := dial(ctx, cfg, Intents)
	if err != nil {
		return nil, err
	}
	b := &Bot{
		cfg: cfg, log: cfg.Log, state: st,
		searchd: client.New(cfg.Socket), spool: sp, pages: newPages(), marks: mk, status: newStatus(cfg.SpoolDir),
		queued: make(chan struct{}, 1), listingAttempts: map[discord.GuildID]int{}, retryQueue: make(chan retry), gapped: make(chan struct{}, 1), present: make(chan []discord.GuildID, 1),
		lost: map[discord.ChannelID]discord.GuildID{}, noAccess: map[discord.ChannelID]bool{}, deletionKick: make(chan struct{}, 1), commands: map[discord.GuildID]bool{},
	}
	b.answers, ans.edit = ans, b.withdraw
	sp.Watch = func() func() {
		done := b.watchRemovals()
		return func() { done(true) }
	}
	b.searchd = watched{Searchd: b.searchd, b: b}
	b.batch = &batcher{put: b.spoolPut, log: cfg.Log, maxItems: cfg.BatchItems, flushEvery: cfg.FlushEvery, marks: mk, lost: b.spoolLost, unsynced: b.markLost}
	b.state.StateLog = func(err error) { b.log.Debug("discord state", "err", err) }
	b.addHandlers()
	return b, nil
}

// dial connects to Discord's REST API and prepares (without opening)
// the gateway with intents.
func dial(ctx context.Context, cfg Config, intents gateway.Intents) (*state.State, error) {
	token := "Bot " + cfg.Token
	hc := httputil.NewClient()
	hc.Client = httpdriver.WrapClient(http.Client{Transport: cfg.Transport, Timeout: 30 * time.Second})
	rest := dapi.NewCustomClient(token, hc)
	// The gateway's address comes through the same client, so a test's
	// transport (or a proxy) sees every request.
	data, err := rest.WithContext(ctx).BotURL()
	var he *httputil.HTTPError
	switch {
	case errors.As(err, &he) && he.Status == http.StatusUnauthorized:
		return nil, ErrBadToken
	case err != nil:
		return nil, fmt.Errorf("cannot reach Discord: %w", err)
	}
	id := gateway.DefaultIdentifier(token)
	id.AddIntents(intents)
	opts := gateway.DefaultGatewayOpts
	opts.FatalCloseCodes = fatalCloseCodes()
	if d := cfg.ReconnectDelay; d > 0 {
		opts.ReconnectDelay = func(try int) time.Duration { return d * time.Duration(1+try) }
	}
	g := gateway.NewCustomWithIdentifier(gateway.AddGatewayParams(data.URL), id, &opts)
	sess := session.NewWithGateway(g, handler.New())
	sess.Client = rest
	return state.NewFromSession(sess, defaultstore.New()), nil
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Run connects to the gateway and serves until ctx ends.
func (b *Bot) Run(ctx context.Context) error {
	defer b.spool.Close() // last: after every writer stopped
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	run := func(f func(context.Context)) {
		wg.Add(1)
		go func() { defer wg.Done(); f(ctx) }()
	}
	run(func(ctx context.Context) { b.spool.Run(ctx, b.post) })
	run(b.batch.run)
	run(b.backfillLoop)
	run(b.confirmDeletions)
	run(b.leaveOutOwnMessages)
	run(b.answers.run)
	run(b.checkAnswers)
	err := b.gateway(ctx)
	b.active.Wait() // interactions in flight finish their replies
	cancel()
	wg.Wait()
	if err := b.marks.save(); err != nil {
		b.log.Warn("cannot save the sync marks; the next start fetches a little again", "err", err)
	}
	return err
}

// gateway connects and stays connected until ctx ends or Discord closes
// the gateway for good (a FatalCloseError, also left in the status file).
func (b *Bot) gateway(ctx context.Context) error {
	for {
		err := b.state.Open(ctx)
		if err == nil {
			b.log.Info("connected to Discord", "spooled_batches", b.spool.Len())
			err = b.state.Wait(ctx)
		}
		if fatal := fatalClose(err); fatal != nil {
			b.state.Close()
			b.log.Error("Discord closed the gateway for good; stopping", "code", fatal.Code, "what_to_do", fatalCloses[fatal.Code])
			if err := b.status.update(func(s *api.BotStatus) {
				now := time.Now().UTC()
				s.Stopped, s.StoppedAt = Redact(fatal.Error()), &now
			}); err != nil {
				b.log.Warn("cannot write the bot status", "err", err)
			}
			return fatal
		}
		if ctx.Err() != nil {
			return nil
		}
		// The gateway gave up on something that may pass: connect anew.
		b.log.Warn("Discord gateway stopped; connecting again", "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(cmpOr(b.cfg.ReconnectDelay, 5*time.Second)):
		}
	}
}

// post sends one spooled batch to searchd (and what it removed leaves
// SPOOL/rejected/, Bot.took: the batches rejected before it are all
// there now).
func (b *Bot) post(ctx context.Context, mb *api.MessageBatch) error {
	_, err := b.searchd.PostMessages(ctx, mb)
	return err
}

// Backfill asks for every allowed guild to be paged through again (and
// caught up), as on start.
func (b *Bot) Backfill() {
	guilds, err := b.state.Guilds()
	if err != nil {
		b.log.Warn("backfill: no guilds known yet", "err", err)
		return
	}
	for _, g := range guilds {
		if b.allowed(g.ID) {
			b.queueBackfill(g.ID)
		}
	}
}

// allowed applies the guild allowlist; direct messages are never synced.
func (b *Bot) allowed(g discord.GuildID) bool {
	return g.IsValid() && (len(b.cfg.Guilds) == 0 || slices.Contains(b.cfg.Guilds, g))
}
