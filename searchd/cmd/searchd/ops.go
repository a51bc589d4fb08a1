package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/peterbourgon/ff/v3/ffcli"
	"golang.org/x/sys/unix"

	"dsearch/searchd/embed"
	"dsearch/searchd/llm"
	"dsearch/searchd/socket"
	"dsearch/searchd/sqlite"
	"dsearch/shared/api"
)

func (m *Main) backupCmd() *ffcli.Command {
	var cfg Config
	return command("backup", "PATH", "write a consistent copy of the database to a new file, while searchd runs", &cfg, nil,
		func(ctx context.Context, args []string) error {
			if len(args) != 1 {
				return errors.New("backup: give the new file's path")
			}
			db, err := cfg.OpenDB(ctx)
			if err != nil {
				return err
			}
			defer db.Close()
			if err := db.Backup(ctx, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(m.Stdout, "backed up to %s (restore: stop searchd, then searchd restore %s)\n", args[0], args[0])
			return nil
		})
}

func (m *Main) restoreCmd() *ffcli.Command {
	var cfg Config
	return command("restore", "BACKUP", "replace the database with a backup, once searchd serve has stopped (the old one is kept)", &cfg, nil,
		func(ctx context.Context, args []string) error {
			if len(args) != 1 {
				return errors.New("restore: give the backup file's path")
			}
			if err := cfg.validate(); err != nil {
				return err
			}
			kept, err := sqlite.Restore(ctx, cfg.Data, args[0], cfg.Rules)
			if err != nil {
				return err
			}
			fmt.Fprintf(m.Stdout, "restored %s from %s; integrity ok\n", filepath.Join(cfg.Data, sqlite.FileName), args[0])
			if kept != "" {
				fmt.Fprintf(m.Stdout, "the previous database is kept as %s (with its -wal and -shm); delete it when satisfied\n", kept)
			}
			return nil
		})
}

func (m *Main) forgetCmd() *ffcli.Command {
	var cfg Config
	var channel, author, before, botSpool string
	return command("forget", "--channel ID | --author ID | --before TIME", "delete messages and everything derived from them", &cfg,
		func(fs *flag.FlagSet) {
			fs.StringVar(&botSpool, "bot-spool", "", "the bot's spool, where it is not DATA/bot-spool: what is forgotten leaves the batches searchd refused there too")
			fs.StringVar(&channel, "channel", "", "a channel's messages and its threads'")
			fs.StringVar(&author, "author", "", "an author's messages and every name they were seen under")
			fs.StringVar(&before, "before", "", "messages older than this (RFC 3339 or date)")
		},
		func(ctx context.Context, _ []string) error {
			var f sqlite.ForgetFilter
			if channel != "" {
				id, err := api.ParseID(channel)
				if err != nil {
					return fmt.Errorf("--channel: %w", err)
				}
				f.Channel = int64(id)
			}
			if author != "" {
				id, err := api.ParseID(author)
				if err != nil {
					return fmt.Errorf("--author: %w", err)
				}
				f.Author = int64(id)
			}
			if before != "" {
				t, err := time.Parse(time.RFC3339, before)
				if err != nil {
					if t, err = time.Parse("2006-01-02", before); err != nil {
						return fmt.Errorf("--before: %q is not RFC 3339 or a date", before)
					}
				}
				f.Before = t.UnixMicro()
			}
			// A spool named is one to clean: a typo would leave what is
			// forgotten in the real one's refused batches, unsaid. (The
			// default, DATA/bot-spool, is absent where the bot's is
			// elsewhere.)
			if botSpool != "" {
				if fi, err := os.Stat(botSpool); err != nil || !fi.IsDir() {
					return fmt.Errorf("nothing forgotten: --bot-spool %s is not a directory (the bot's --spool)", botSpool)
				}
			}
			db, err := cfg.OpenDB(ctx)
			if err != nil {
				return err
			}
			defer db.Close()
			// A channel's threads go with it, as when the bot forgets a
			// channel deleted on Discord.
			channels := []int64{f.Channel}
			if f.Channel != 0 {
				if channels, err = db.WithTheirThreads(ctx, channels); err != nil {
					return err
				}
			}
			selection := f
			set := map[int64]bool{}
			for _, ch := range channels {
				set[ch] = true
			}
			spool := cmp.Or(botSpool, filepath.Join(cfg.Data, "bot-spool"))
			// The bot's refused batches first: a replay (which holds
			// rejected/'s lock while it sends) must not store what the
			// database forget has passed, never stored and so without a
			// tombstone; again after, for a batch refused meanwhile.
			took, err := forgetRejected(spool, selection, set, nil)
			if err != nil {
				return fmt.Errorf("nothing forgotten in the database: the bot's refused batches in %s could not be cleaned: %w", filepath.Join(spool, "rejected"), err)
			}
			n := 0
			for _, ch := range channels {
				f.Channel = ch
				forgot, err := db.Forget(ctx, f, cfg.Rules)
				n += forgot
				if err != nil {
					return err
				}
			}
			if forgetStep != nil {
				forgetStep("database")
			}
			if _, err := db.PurgeDeleted(ctx, true); err != nil { // gone from the files now
				return err
			}
			fmt.Fprintf(m.Stdout, "forgot %s (a running searchd drops their vectors within seconds)\n", plural(int(n), "message", "messages"))
			deleted := func(id int64) bool {
				d, err := db.Deleted(ctx, []int64{id})
				return err == nil && len(d) == 1
			}
			if more, err := forgetRejected(spool, selection, set, deleted); err != nil {
				return fmt.Errorf("forgotten, but the bot's refused batches in %s could not all be cleaned (delete them, or run forget again): %w", filepath.Join(spool, "rejected"), err)
			} else if took += more; took > 0 {
				fmt.Fprintf(m.Stdout, "and took %s out of the bot's refused batches (%s)\n", plural(took, "message", "messages"), filepath.Join(spool, "rejected"))
			}
			if n == 0 && took == 0 {
				// A mistyped ID forgets nothing and would pass for done.
				fmt.Fprintln(m.Stdout, "no stored message matched: check the ID (Discord: Copy Channel ID / Copy User ID) or the time")
			}
			return nil
		})
}

// check is one line of searchd doctor.
type check struct {
	ok   bool
	warn bool
	line string
}

func (m *Main) doctorCmd() *ffcli.Command {
	var cfg Config
	return command("doctor", "[flags]", "check the set-up and explain what is wrong, a line each", &cfg, nil,
		func(ctx context.Context, _ []string) error {
			checks := m.doctor(ctx, &cfg)
			bad := 0
			for _, c := range checks {
				mark := "ok  "
				switch {
				case !c.ok:
					mark, bad = "FAIL", bad+1
				case c.warn:
					mark = "warn"
				}
				fmt.Fprintf(m.Stdout, "%s  %s\n", mark, c.line)
			}
			if bad > 0 {
				return fmt.Errorf("%s failed", plural(bad, "check", "checks"))
			}
			return nil
		})
}

func (m *Main) doctor(ctx context.Context, cfg *Config) []check {
	var out []check
	add := func(ok bool, format string, args ...any) {
		out = append(out, check{ok: ok, line: fmt.Sprintf(format, args...)})
	}
	warn := func(format string, args ...any) {
		out = append(out, check{ok: true, warn: true, line: fmt.Sprintf(format, args...)})
	}
	if err := cfg.validate(); err != nil {
		add(false, "configuration: %v", err)
		return out
	}
	// Directories and socket.
	if fi, err := os.Stat(cfg.Data); err != nil {
		add(false, "data directory %s: %v (searchd import or serve creates it)", cfg.Data, err)
	} else if fi.Mode().Perm()&0o077 != 0 {
		add(false, "data directory %s has mode %#o: messages are private (fix: chmod 700 %s)", cfg.Data, fi.Mode().Perm(), cfg.Data)
	} else {
		add(true, "data directory %s is private", cfg.Data)
	}
	sock := cfg.SocketPath()
	if err := socket.CheckDir(filepath.Dir(sock)); err != nil && !os.IsNotExist(errors.Unwrap(err)) {
		add(false, "%v", err)
	} else if _, err := os.Stat(sock); err == nil {
		add(true, "socket %s exists (searchd status tells whether it answers)", sock)
	} else {
		warn("socket %s is absent: searchd serve is not running", sock)
	}
	// Database.
	dbPath := filepath.Join(cfg.Data, sqlite.FileName)
	if fi, err := os.Stat(dbPath); err == nil {
		if fi.Mode().Perm()&0o077 != 0 {
			add(false, "database %s has mode %#o (fix: chmod 600 %s)", dbPath, fi.Mode().Perm(), dbPath)
		}
		db, err := sqlite.Open(ctx, cfg.Data)
		if err != nil {
			add(false, "database %s: %v", dbPath, err)
		} else {
			defer db.Close()
			if res, err := db.QuickCheck(ctx); err != nil || res != "ok" {
				add(false, "database integrity: %s %v (restore a backup: searchd backup)", res, err)
			} else {
				v, _ := db.SchemaVersion(ctx)
				add(true, "database %s: integrity ok, schema %d", dbPath, v)
			}
			if c, err := db.EmbeddingCounts(ctx); err == nil {
				// Segments and messages are embedded apart: either can lag.
				if segs, msgs := c.Segments-c.SegmentsDone, c.Messages-c.MessagesDone; segs > 0 || msgs > 0 {
					warn("embedding backlog: %d of %d segments, %d of %d messages not embedded (searchd serve embeds them; or searchd embed)",
						segs, c.Segments, msgs, c.Messages)
				} else {
					add(true, "embeddings: all %d segments and %d messages current", c.Segments, c.Messages)
				}
			}
			// How many, never who: that is each member's own business.
			if n, err := db.OptOuts(ctx); err == nil {
				add(true, "opt-outs: %d member(s) asked to be left out (their messages are forgotten and not indexed)", n)
			}
			if name, _ := db.Meta(ctx, "embedding_model"); name != "" && cfg.Model != "" {
				if mc, err := embed.LoadConfig(cfg.Model); err == nil && mc.Name != name {
					add(false, "the database holds vectors of %s but --model is %s (fix: searchd reindex)", name, mc.Name)
				}
			}
		}
	} else {
		warn("no database yet at %s (searchd import creates it)", dbPath)
	}
	// Copies of the database beside it hold message text, deleted and
	// forgotten messages included, that no purge reaches.
	kept, _ := filepath.Glob(dbPath + ".before-restore-*")
	if _, err := os.Stat(dbPath + ".restoring"); err == nil {
		kept = append(kept, dbPath+".restoring")
	}
	if kept = slices.DeleteFunc(kept, func(p string) bool {
		return strings.HasSuffix(p, "-wal") || strings.HasSuffix(p, "-shm") || strings.HasSuffix(p, "-journal")
	}); len(kept) > 0 {
		warn("%s of the database beside it (%s): a restore's, holding what was deleted or forgotten since it was made; delete it once the restored database is what you want", plural(len(kept), "copy", "copies"), filepath.Base(kept[0]))
	}
	// The bot's spool (DATA/bot-spool, its default): what waits for searchd.
	spool := filepath.Join(cfg.Data, "bot-spool")
	if waiting, err := api.SpoolBatches(spool); err == nil && len(waiting) > 0 {
		warn("%d batches from the bot wait in %s (searchd serve takes them in order)", len(waiting), spool)
	}
	if refused, err := api.SpoolBatches(filepath.Join(spool, "rejected")); err == nil && len(refused) > 0 {
		add(false, "searchd refused %d of the bot's batches; they are kept in %s (fix the cause, then dsearch-bot --replay-rejected; docs/troubleshooting.md)",
			len(refused), filepath.Join(spool, "rejected"))
	}
	// What the bot left for its operator: a fatal gateway close, channels
	// it could not sync.
	if st, err := api.ReadBotStatus(spool); err != nil {
		warn("the bot's status file in %s is unreadable: %v", spool, err)
	} else if st != nil {
		if st.Stopped != "" {
			add(false, "the bot stopped for good: %s", st.Stopped)
		}
		for _, c := range st.Incomplete {
			warn("the bot could not sync channel %s (#%s): %s (dsearch-bot --check)", c.Channel, c.Name, c.Why)
		}
		if st.SpoolFailures > 0 {
			warn("the bot's spool could not take %d events (last: %s); the bot fetched their channels again", st.SpoolFailures, st.LastSpoolFailure)
		}
	}
	// Model and ONNX Runtime.
	if cfg.Model == "" {
		warn("no embedding model configured: only keyword search (set --model; make model fetches one)")
	} else if mc, err := embed.LoadConfig(cfg.Model); err != nil {
		add(false, "model: %v", err)
	} else {
		add(true, "model %s: %s, %d dimensions, %s pooling", cfg.Model, mc.Name, mc.Dimension, mc.Pooling)
	}
	if cfg.EmbedBackend == string(embed.ORT) {
		lib := filepath.Join(cfg.ORTLibrary, "libonnxruntime.so")
		if _, err := os.Stat(lib); err != nil {
			lib = filepath.Join(cfg.ORTLibrary, "libonnxruntime.dylib")
		}
		if _, err := os.Stat(lib); err != nil || cfg.ORTLibrary == "" {
			add(false, "ONNX Runtime library not found in %q (fix: make deps, or --ort-library DIR, or --embed-backend go)", cfg.ORTLibrary)
		} else {
			add(true, "ONNX Runtime: %s", lib)
		}
	}
	// Ollama.
	if cfg.UseLLM {
		url, p := llm.DefaultURL(cfg.OllamaURL), cfg.LLMPolicy()
		ep, err := p.Check(ctx, url)
		switch {
		case err != nil:
			add(false, "LLM endpoint: %v", err)
		case ep.Remote:
			warn("LLM endpoint %s is not on this machine (allowed by --llm-remote): questions and the text of results leave it", llm.Redact(url))
		default:
			add(true, "LLM endpoint %s: loopback only, no proxy, served by this account or %s", llm.Redact(url), ownersText(p.Owners))
		}
		if err == nil {
			ok, format, args := llmCheck(ctx, p, cfg.LLMAPI, url, cfg.OllamaModel)
			add(ok, format, args...)
		}
	}
	// Disk space.
	var st unix.Statfs_t
	if err := unix.Statfs(cfg.Data, &st); err == nil {
		free := st.Bavail * uint64(st.Bsize)
		if free < 1<<30 {
			add(false, "only %d MiB free under %s (imports and vectors need room)", free>>20, cfg.Data)
		} else {
			add(true, "%d GiB free under %s", free>>30, cfg.Data)
		}
	}
	return out
}

// ownersText names the accounts a loopback LLM may run as, for doctor.
func ownersText(owners []string) string {
	if len(owners) == 0 {
		return "no other account"
	}
	return strings.Join(owners, ", ")
}

// llmCheck asks the LLM server for its version and models: Ollama's
// GET /api/version and /api/tags, or an OpenAI-compatible GET /v1/models.
// It connects as the LLM client does (p: no proxy, loopback owner
// checked) and shows the URL and errors without credentials or query.
func llmCheck(ctx context.Context, p *llm.Policy, api, rawURL, model string) (bool, string, []any) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	hc := p.HTTPClient()
	url := llm.Redact(rawURL)
	get := func(path string, v any) error {
		req, err := http.NewRequestWithContext(ctx, "GET", strings.TrimSuffix(rawURL, "/")+path, nil)
		if err != nil {
			return errors.New(llm.RedactText(err.Error()))
		}
		resp, err := hc.Do(req)
		if err != nil {
			return errors.New(llm.RedactText(err.Error()))
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s", path, resp.Status)
		}
		return json.NewDecoder(resp.Body).Decode(v)
	}
	if api == llm.APIOpenAI {
		var list struct {
			Data []struct{ ID string } `json:"data"`
		}
		path := "/v1/models"
		if strings.HasSuffix(strings.TrimSuffix(url, "/"), "/v1") {
			path = "/models"
		}
		if err := get(path, &list); err != nil {
			return false, "the OpenAI-compatible server at %s is not reachable or answered oddly: %v", []any{url, err}
		}
		for _, m := range list.Data {
			if m.ID == model || strings.TrimSuffix(m.ID, ":latest") == model {
				return true, "the OpenAI-compatible server at %s has %s", []any{url, model}
			}
		}
		return false, "the OpenAI-compatible server at %s does not serve %s (it has %d models; set --ollama-model)", []any{url, model, len(list.Data)}
	}
	var v struct{ Version string }
	if err := get("/api/version", &v); err != nil {
		return false, "Ollama at %s is not reachable: %v (start it: ollama serve; or --llm=false for results only)", []any{url, err}
	}
	var tags struct {
		Models []struct{ Name string } `json:"models"`
	}
	if err := get("/api/tags", &tags); err != nil {
		return false, "Ollama %s at %s answered oddly: %v", []any{v.Version, url, err}
	}
	for _, mdl := range tags.Models {
		if mdl.Name == model || strings.TrimSuffix(mdl.Name, ":latest") == model {
			return true, "Ollama %s at %s has %s", []any{v.Version, url, model}
		}
	}
	return false, "Ollama %s at %s does not have %s (fix: ollama pull %s)", []any{v.Version, url, model, model}
}
