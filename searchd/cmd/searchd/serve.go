package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/peterbourgon/ff/v3/ffcli"

	"dsearch/searchd/embed"
	"dsearch/searchd/index"
	"dsearch/searchd/internal/memlimit"
	"dsearch/searchd/llm"
	"dsearch/searchd/search"
	"dsearch/searchd/server"
	"dsearch/searchd/socket"
	"dsearch/searchd/sqlite"
)

func (m *Main) serveCmd() *ffcli.Command {
	var cfg Config
	var grace time.Duration
	var memLimit int
	return command("serve", "[flags]", "serve the API on the private Unix socket", &cfg,
		func(fs *flag.FlagSet) {
			fs.DurationVar(&grace, "shutdown-grace", 10*time.Second, "how long in-flight requests may finish at shutdown")
			fs.IntVar(&memLimit, "memory-limit", 384, "soft limit of the Go heap in MiB, or a quarter above the live heap when more, when GOMEMLIMIT is not set (0: none)")
		},
		func(ctx context.Context, _ []string) error {
			if memLimit > 0 && os.Getenv("GOMEMLIMIT") == "" {
				ctx, stop := context.WithCancel(ctx)
				defer stop()
				go memlimit.Follow(ctx, int64(memLimit)<<20, 5*time.Second)
			}
			return m.serve(ctx, &cfg, grace)
		})
}

// serve runs the daemon until ctx is done (SIGINT or SIGTERM): the HTTP
// server stops first, letting in-flight requests finish and removing the
// socket, and the database closes last. A second signal kills at once
// (main restores default signal handling once ctx is done).
func (m *Main) serve(ctx context.Context, cfg *Config, grace time.Duration) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	log, err := cfg.Logger(m.Stderr)
	if err != nil {
		return err
	}
	// One daemon per data directory, whatever its socket; restore waits
	// for it too. Released last, after the database closes.
	lock, err := sqlite.LockDir(cfg.Data)
	if err != nil {
		return err
	}
	defer lock.Release()
	db, err := sqlite.Open(ctx, cfg.Data)
	if err != nil {
		return err
	}
	defer db.Close()
	sc, err := cfg.SearchConfig()
	if err != nil {
		return err
	}
	svc := &search.Service{DB: db, Config: sc, Keywords: &index.Keywords{DB: db, Log: log},
		Memberships: &index.Memberships{DB: db, Log: log}}
	// The model loads before anything else runs: hugot's ORT loader
	// changes the working directory while it loads.
	var emb *server.Embedding
	if cfg.Model != "" {
		if cfg.EmbedThreads == 0 {
			// One thread per inference, several inferences at once:
			// searches embed side by side, and the background job's
			// batches run on threads of lowered priority
			// (embed.Background) that a query's own thread outranks.
			cfg.EmbedThreads = 1
		}
		model, err := cfg.LoadModelFor(ctx, db)
		if err != nil {
			return err
		}
		defer model.Close()
		matrix, err := index.LoadMatrix(ctx, db, model.Dim())
		if err != nil {
			return err
		}
		log.Info("embedding model loaded", "model", model.Name(), "backend", model.Backend(),
			"load_time", model.LoadTime.Round(time.Millisecond), "vectors", matrix.Len())
		job := &index.Job{DB: db, Embedder: model, Matrix: matrix, Log: log, Lease: fmt.Sprintf("searchd serve (pid %d)", os.Getpid())}
		emb = &server.Embedding{Model: model.Name(), Backend: string(model.Backend()), Dim: model.Dim(), Job: job, Matrix: matrix}
		svc.Embedder, svc.Matrix = model, matrix
		if svc.Config.MinSimilarity < 0 {
			svc.Config.MinSimilarity = model.Config().MinSimilarity
		}
	} else {
		log.Warn("no embedding model configured (--model): serving without embeddings")
	}
	path := cfg.SocketPath()
	ln, err := socket.Listen(path)
	if err != nil {
		return err
	}
	log.Info("searchd listening", "socket", path, "data", cfg.Data, "version", version)
	ans, err := cfg.AnswerService(db, svc)
	if err != nil {
		return err
	}
	if c, ok := ans.LLM.(*llm.Client); ok && c.Endpoint.Remote {
		log.Warn("the LLM server is not on this machine (--llm-remote): questions and the text of results go to it", "url", c.Shown)
	}
	srv := &server.Server{DB: db, Rules: cfg.Rules, Log: log, Version: version, Embedding: emb, Search: svc, Answer: ans,
		BotSpool: filepath.Join(cfg.Data, "bot-spool")}
	jobDone := make(chan struct{})
	go func() {
		defer close(jobDone)
		if emb != nil {
			emb.Job.Run(embed.Background(ctx), 10*time.Second)
		}
	}()
	// Keyword search runs on FTS5 until the in-memory index has loaded.
	keywordsDone := make(chan struct{})
	go func() {
		defer close(keywordsDone)
		if err := svc.Keywords.Run(ctx, time.Minute); err != nil && ctx.Err() == nil {
			log.Error("keyword index: not loaded; keyword search stays on FTS5", "err", err)
		}
	}()
	// A required keyword's segments come from SQLite until the
	// memberships have loaded.
	membershipsDone := make(chan struct{})
	go func() {
		defer close(membershipsDone)
		if err := svc.Memberships.Run(ctx, time.Minute); err != nil && ctx.Err() == nil {
			log.Error("segment memberships: not loaded; keywords' segments come from SQLite", "err", err)
		}
	}()
	// Deletions and edits leave the files (the WAL's older pages) seconds
	// after their write, and the keyword index's page keys within the
	// hour (sqlite/purge.go). An opt-out or searchd forget purges at once.
	purgeDone := make(chan struct{})
	go func() {
		defer close(purgeDone)
		db.PurgeEvery(ctx, time.Minute, func(err error) {
			log.Warn("cannot empty the WAL of deleted text; trying again in a minute", "err", err)
		})
	}()
	err = srv.Serve(ctx, ln, grace)
	<-purgeDone
	<-jobDone // the job stops after its current batch; then model and database close
	<-keywordsDone
	<-membershipsDone
	log.Info("searchd stopped")
	return err
}
