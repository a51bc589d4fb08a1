// Command dsearch-bot is the Discord side of dsearch: it keeps searchd's
// copy of the server current and answers /query, /catchup and "Find
// related conversations". It talks to searchd only through its socket.
//
// The token comes from DSEARCH_TOKEN_FILE (a file only its owner can
// read) or DSEARCH_TOKEN, never from a flag: arguments show in ps.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/diamondburned/arikawa/v3/discord"
	"github.com/peterbourgon/ff/v3"

	"dsearch/bot"
	"dsearch/bot/spool"
	"dsearch/shared/api"
	"dsearch/shared/client"
)

// exitConfig is the exit status (EX_CONFIG) when restarting cannot help
// until a person acts: Discord refused the token or closed the gateway
// for good. The systemd unit does not restart on it.
const exitConfig = 78

// version is set at link time by the Makefile.
var version = "dev"

// usageError is a mistake in the command line: exit status 2, as Go's
// flag package has it.
type usageError struct{ error }

func main() {
	err := run(os.Args[1:], os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "dsearch-bot:", bot.Redact(err.Error()))
	}
	var fatal *bot.FatalCloseError
	switch {
	case errors.As(err, new(usageError)):
		os.Exit(2)
	case errors.As(err, &fatal) || errors.Is(err, bot.ErrBadToken):
		os.Exit(exitConfig)
	case err != nil:
		os.Exit(1)
	}
}

// options are the command line; every flag also reads DSEARCH_<NAME>.
type options struct {
	data, socket, spool, guilds, logLevel, logFormat *string
	spoolMax                                         *int64
	backfill, check, replay, reconcile, version      *bool
	page                                             *int
}

func newFlags() (*flag.FlagSet, *options) {
	fs := flag.NewFlagSet("dsearch-bot", flag.ContinueOnError)
	o := &options{
		data:      fs.String("data", client.DefaultDataDir(), "data directory; the spool lives in DATA/bot-spool"),
		socket:    fs.String("socket", "", "searchd socket (default $XDG_RUNTIME_DIR/dsearch/searchd.sock, else DATA/run/searchd.sock)"),
		spool:     fs.String("spool", "", "directory for events waiting for searchd (default DATA/bot-spool)"),
		spoolMax:  fs.Int64("spool-max-mb", 256, "most megabytes the spool may hold"),
		guilds:    fs.String("guilds", "", "comma-separated server IDs to serve; empty serves every server the bot is in"),
		backfill:  fs.Bool("backfill", true, "page through every readable channel's history on start (send SIGHUP for another pass)"),
		page:      fs.Int("page-size", 5, "results per reply page"),
		check:     fs.Bool("check", false, "only check that searchd answers and that the spool holds no rejected batches, then exit"),
		replay:    fs.Bool("replay-rejected", false, "send the batches searchd refused (SPOOL/rejected) again, then exit"),
		reconcile: fs.Bool("reconcile", false, "page through every readable channel's whole history, fix edits and deletions searchd missed, then exit (resumable; runs beside the bot)"),
		logLevel:  fs.String("log-level", "info", "debug, info, warn or error"),
		logFormat: fs.String("log-format", "text", "text or json"),
	}
	fs.String("config", "", "config file (flag value per line)")
	o.version = fs.Bool("version", false, "print the version and exit")
	return fs, o
}

func run(args []string, stdout io.Writer) error {
	fs, o := newFlags()
	fs.SetOutput(io.Discard) // help and errors are printed here, once
	err := ff.Parse(fs, args, ff.WithEnvVarPrefix("DSEARCH"), ff.WithConfigFileFlag("config"), ff.WithConfigFileParser(ff.PlainParser))
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintln(stdout, "dsearch-bot: the Discord bot of dsearch (docs/bot.md); its token comes from DSEARCH_TOKEN_FILE (a file, mode 0600) or DSEARCH_TOKEN.\n\nUsage: dsearch-bot [flags]\n\nFlags (each also read from DSEARCH_<NAME>):")
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return nil
	case err != nil:
		return usageError{fmt.Errorf("%w (dsearch-bot -h lists the flags)", err)}
	case len(fs.Args()) > 0:
		return usageError{fmt.Errorf("unexpected arguments %q: dsearch-bot takes only flags (dsearch-bot -h lists them)", fs.Args())}
	case *o.version:
		fmt.Fprintln(stdout, "dsearch-bot", version)
		return nil
	}
	if err := searchdPlaces(fs, o); err != nil {
		return err
	}
	// A reply shows at most an embed's 25 fields, and More goes on after
	// the whole page (searchd pages 1 to 50); a spool bound below zero
	// refuses all.
	if *o.page < 1 || *o.page > 25 {
		return usageError{fmt.Errorf("--page-size %d: give 1 to 25 results per page (a Discord embed shows 25)", *o.page)}
	}
	if *o.spoolMax < 1 {
		return usageError{fmt.Errorf("--spool-max-mb %d: give the spool at least 1 megabyte", *o.spoolMax)}
	}
	data, socket, spoolDir, guilds := o.data, o.socket, o.spool, o.guilds
	check, logLevel, logFormat, spoolMax, backfill, page := o.check, o.logLevel, o.logFormat, o.spoolMax, o.backfill, o.page
	if *socket == "" {
		*socket = client.DefaultSocket(*data)
	}
	if *spoolDir == "" {
		*spoolDir = filepath.Join(*data, "bot-spool")
	}
	if *check {
		return checkSearchd(*socket, *spoolDir, stdout)
	}
	if *o.replay {
		return replayRejected(*socket, *spoolDir, stdout)
	}
	log, err := logger(*logLevel, *logFormat)
	if err != nil {
		return err
	}
	token, err := readToken()
	if err != nil {
		return err
	}
	cfg := bot.Config{Token: token, Socket: *socket, SpoolDir: *spoolDir, SpoolMax: *spoolMax << 20,
		Backfill: *backfill, PageSize: *page, Log: log}
	for _, s := range strings.FieldsFunc(*guilds, func(r rune) bool { return r == ',' || r == ' ' }) {
		id, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return fmt.Errorf("--guilds: %q is not a server ID", s)
		}
		cfg.Guilds = append(cfg.Guilds, discord.GuildID(id))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *o.reconcile {
		return bot.Reconcile(ctx, cfg, stdout)
	}
	b, err := connect(ctx, cfg, log)
	if ctx.Err() != nil {
		return nil // stopped while waiting for Discord
	}
	if err != nil {
		return err
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		for range hup {
			log.Info("SIGHUP: backfilling again")
			b.Backfill()
		}
	}()
	return b.Run(ctx)
}

// checkSearchd checks that searchd answers, and reports what waits in
// the spool (a rejected batch is history searchd does not have) and what
// the bot left in its status file: a fatal gateway close, channels it
// could not sync, events its spool could not take.
func checkSearchd(socket, spoolDir string, stdout io.Writer) error {
	stopped, err := reportBotStatus(spoolDir, stdout)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	h, err := client.New(socket).Health(ctx)
	if err != nil {
		return err
	}

	fmt.Fprintf(stdout, "searchd %s is up (schema %d)\n", h.Version, h.SchemaVersion)
	if waiting, _ := spool.Waiting(spoolDir); len(waiting) > 0 {
		fmt.Fprintf(stdout, "%d batches wait in %s for searchd (delivered in order while the bot runs)\n", len(waiting), spoolDir)
	}
	rejected, err := spool.Rejected(spoolDir)
	if err != nil {
		return err
	}
	if len(rejected) > 0 {
		return fmt.Errorf("searchd refused %d batches; they are kept in %s (once the cause is fixed: dsearch-bot --replay-rejected)",
			len(rejected), filepath.Join(spoolDir, "rejected"))
	}
	if stopped != "" {
		return fmt.Errorf("the bot stopped for good: %s", stopped)
	}
	return nil
}

// reportBotStatus prints what the bot's status file says; it returns why
// the bot stopped for good, if it did.
func reportBotStatus(spoolDir string, stdout io.Writer) (stopped string, err error) {
	st, err := api.ReadBotStatus(spoolDir)
	if err != nil {
		return "", err
	}
	if st == nil {
		// The bot writes it at every connection to Discord.
		fmt.Fprintf(stdout, "the bot has not connected to Discord with the spool %s yet: start it (docs/bot.md), or give --check the bot's own --data or --spool\n", spoolDir)
		return "", nil
	}
	if st.Stopped != "" {
		fmt.Fprintf(stdout, "the bot stopped at %s: %s\n", st.StoppedAt.Local().Format(time.DateTime), st.Stopped)
	}
	for _, c := range st.Incomplete {
		when := "the bot keeps trying while it runs"
		if !c.Retrying {
			when = "fix the cause, then restart the bot or send it SIGHUP"
		}
		fmt.Fprintf(stdout, "channel %s (#%s, server %s) is not fully synced: %s (%s)\n", c.Channel, c.Name, c.Guild, c.Why, when)
	}
	if st.SpoolFailures > 0 {
		fmt.Fprintf(stdout, "the spool could not take %d events since the bot started (last at %s: %s); the bot fetched their channels again\n",
			st.SpoolFailures, st.LastSpoolFailAt.Local().Format(time.DateTime), st.LastSpoolFailure)
	}
	return st.Stopped, nil
}

// replayRejected sends the rejected batches to searchd again. It is safe
// while the bot runs.
func replayRejected(socket, spoolDir string, stdout io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c := client.New(socket)
	res, err := spool.ReplayRejected(ctx, spoolDir, func(ctx context.Context, b *api.MessageBatch) error {
		_, err := c.PostMessages(ctx, b)
		return err
	})
	var left int
	for _, r := range res {
		if r.Err != nil {
			left++
			fmt.Fprintf(stdout, "%s: refused again: %v\n", r.Path, r.Err)
		} else {
			fmt.Fprintf(stdout, "%s: delivered\n", r.Path)
		}
	}
	switch {
	case err != nil:
		return fmt.Errorf("replay stopped (the rest stay in %s): %w", filepath.Join(spoolDir, "rejected"), err)
	case left > 0:
		return fmt.Errorf("%d of %d rejected batches refused again; they stay in %s", left, len(res), filepath.Join(spoolDir, "rejected"))
	}
	fmt.Fprintf(stdout, "replayed %d rejected batches\n", len(res))
	return nil
}

// connect creates the bot, waiting out a Discord outage (or no network)
// with growing pauses; a refused token ends it at once.
func connect(ctx context.Context, cfg bot.Config, log *slog.Logger) (*bot.Bot, error) {
	wait := 5 * time.Second
	for {
		b, err := bot.New(ctx, cfg)
		if err == nil || errors.Is(err, bot.ErrBadToken) || ctx.Err() != nil {
			return b, err
		}
		log.Warn("Discord is not reachable; trying again", "in", wait, "err", err)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Minute)
	}
}

// readToken reads the bot token from DSEARCH_TOKEN_FILE, refusing a file
// others can read, or else from DSEARCH_TOKEN.
func readToken() (string, error) {
	if path := os.Getenv("DSEARCH_TOKEN_FILE"); path != "" {
		info, err := os.Stat(path)
		if err != nil {
			return "", fmt.Errorf("token file: %w", err)
		}
		if info.Mode().Perm()&0o077 != 0 {
			return "", fmt.Errorf("token file %s is readable by others (mode %04o); run chmod 600 %s", path, info.Mode().Perm(), path)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("token file: %w", err)
		}
		return cleanToken(string(b))
	}
	if t := os.Getenv("DSEARCH_TOKEN"); t != "" {
		return cleanToken(t)
	}
	return "", errors.New("no bot token: set DSEARCH_TOKEN_FILE to a file holding it (mode 0600), or DSEARCH_TOKEN")
}

func cleanToken(s string) (string, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "Bot ")
	if s == "" || strings.ContainsAny(s, " \n\t") {
		return "", errors.New("the bot token is empty or malformed")
	}
	return s, nil
}

func logger(level, format string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: l}
	switch format {
	case "text":
		return slog.New(bot.RedactingHandler(slog.NewTextHandler(os.Stderr, opts))), nil
	case "json":
		return slog.New(bot.RedactingHandler(slog.NewJSONHandler(os.Stderr, opts))), nil
	}
	return nil, fmt.Errorf("--log-format must be text or json, not %q", format)
}

// searchdPlaces takes the data directory and socket searchd's own config
// file sets (docs/install.md), where neither a flag nor DSEARCH_DATA or
// DSEARCH_SOCKET sets them: the bot's defaults are searchd's.
func searchdPlaces(fs *flag.FlagSet, o *options) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["data"] && set["socket"] {
		return nil
	}
	path := client.DefaultConfigFile()
	data, socket, err := client.Places(path)
	if err != nil {
		return fmt.Errorf("searchd's config file: %w", err)
	}
	if data != "" && !set["data"] {
		*o.data = data
	}
	if socket != "" && !set["socket"] {
		*o.socket = socket
	}
	return nil
}
