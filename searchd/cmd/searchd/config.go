package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/peterbourgon/ff/v3"
	"github.com/peterbourgon/ff/v3/ffcli"

	"dsearch/searchd/answer"
	"dsearch/searchd/embed"
	"dsearch/searchd/internal/privlog"
	"dsearch/searchd/llm"
	"dsearch/searchd/search"
	"dsearch/searchd/segment"
	"dsearch/searchd/sqlite"
	"dsearch/shared/client"
)

// Config is what every subcommand shares.
type Config struct {
	Data      string
	Socket    string
	LogLevel  string
	LogFormat string
	Rules     segment.Rules
	Linker    string // --linker: shipped, off or a weights file

	Model        string
	EmbedBackend string
	ORTLibrary   string
	EmbedThreads int

	Search   search.Config
	Synonyms string

	LLMAPI      string
	OllamaURL   string
	OllamaModel string
	UseLLM      bool
	LLMRemote   bool
	LLMOwners   string
	Aliases     string
	Answer      answer.Config
}

// defaultORTLibrary is where `make deps` put ONNX Runtime, set at link
// time by the Makefile.
var defaultORTLibrary = ""

func defaultBackend() string {
	if embed.ORTAvailable {
		return string(embed.ORT)
	}
	return string(embed.Go)
}

// register adds the shared flags to fs.
func (c *Config) register(fs *flag.FlagSet) {
	fs.StringVar(&c.Data, "data", client.DefaultDataDir(), "data directory (database); created 0700")
	fs.StringVar(&c.Socket, "socket", "", "API socket path (default $XDG_RUNTIME_DIR/dsearch/searchd.sock, else DATA/run/searchd.sock)")
	fs.StringVar(&c.LogLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.StringVar(&c.LogFormat, "log-format", "text", "log format: text or json")
	fs.DurationVar(&c.Rules.Gap, "gap", segment.DefaultRules.Gap, "segmentation: a message this soon after its channel's current conversation joins it")
	fs.DurationVar(&c.Rules.ReplyWindow, "reply-window", segment.DefaultRules.ReplyWindow, "segmentation: a reply this soon after its parent joins the parent's conversation")
	fs.StringVar(&c.Linker, "linker", "shipped", "segmentation: the reply-link model (shipped: the one built in; off: the blog's time rules; else a weights file from `searchd train linker`)")
	fs.StringVar(&c.Model, "model", "", "embedding model directory (model.onnx, tokenizer.json, "+embed.ConfigFile+"); see docs/models.md")
	fs.StringVar(&c.EmbedBackend, "embed-backend", defaultBackend(), "embedding runtime: ort (ONNX Runtime) or go (pure Go, slower)")
	fs.StringVar(&c.ORTLibrary, "ort-library", defaultORTLibrary, "directory holding libonnxruntime (.so or .dylib)")
	fs.IntVar(&c.EmbedThreads, "embed-threads", 0, "ONNX Runtime threads per inference (0: serve and embed run an inference per core, one thread each; other commands one inference over every core)")
	c.Search = search.DefaultConfig()
	fs.Float64Var(&c.Search.MinSimilarity, "min-similarity", -1, "drop semantic results below this cosine similarity and say nothing confident was found (0: off; -1: the model's calibrated floor, min_similarity in "+embed.ConfigFile+", for serve, off for eval)")
	fs.Float64Var(&c.Search.Standout, "standout", c.Search.Standout, "a result is confident when its similarity stands this many standard deviations above what the best of the conversations searched reaches by chance (docs/retrieval.md, \"Abstention\")")
	fs.Float64Var(&c.Search.Support, "support", c.Search.Support, "... or when this share of the query's content words is in its messages beyond those as much text holds by chance")
	fs.Float64Var(&c.Search.Closeness, "closeness", c.Search.Closeness, "... or when its similarity goes this share of the way from the query's mean over the conversations searched to the query's similarity to itself as a passage, a copy's (0: off, and no second embedding of the query)")
	fs.Float64Var(&c.Search.TranslationCloseness, "translation-closeness", c.Search.TranslationCloseness, "... the same share for a result mostly written in another script than the query, which can only be a translation (0: --closeness for every result)")
	fs.BoolVar(&c.Search.SupportNear, "support-near", c.Search.SupportNear, "... where the support counts only when the result's messages nearer the query than the average message hold some of those words beyond chance (false: anywhere in the result)")
	fs.Float64Var(&c.Search.Together, "together", c.Search.Together, "... or when the first ten results together hold this share of the query's content words beyond those as much text holds by chance (0: off)")
	fs.Float64Var(&c.Search.LexicalWeight, "lexical-weight", c.Search.LexicalWeight, "hybrid: weight of the lexical ranking's z-scores")
	fs.Float64Var(&c.Search.LexicalSupport, "lexical-support", c.Search.LexicalSupport, "hybrid: fuse the lexical ranking only when one of its first hits holds this share of the query's content words (0: always)")
	fs.Float64Var(&c.Search.SemanticWeight, "semantic-weight", c.Search.SemanticWeight, "hybrid: weight of the semantic ranking's z-scores")
	fs.Float64Var(&c.Search.MinReading, "min-reading", c.Search.MinReading, "a query the model reads less of (the share of its letters in the model's pieces of words) ranks by its words in hybrid, and questions search it in hybrid mode (0: off)")
	fs.Float64Var(&c.Search.AuthorBoost, "author-boost", c.Search.AuthorBoost, "weight up messages by a person the query names, and take the name out of the query text (0: off)")
	fs.Float64Var(&c.Search.SegmentWeight, "segment-weight", c.Search.SegmentWeight, "pipeline: final = w·segment + (1−w)·best message")
	fs.Float64Var(&c.Search.AnswerCredit, "answer-credit", c.Search.AnswerCredit, "a reply to a question by someone else scores at least this share of the similarity of the question, or of the replier's message it asked about (0: off)")
	fs.StringVar(&c.Synonyms, "synonyms", "", `keyword synonyms: a JSON file like {"claude": ["클로드", "클코"]}`)
	fs.StringVar(&c.LLMAPI, "llm-api", llm.APIOllama, "the LLM server's API: ollama, or openai (/v1/chat/completions: llama.cpp's server, LM Studio, vLLM; key in DSEARCH_LLM_API_KEY if it needs one)")
	fs.StringVar(&c.OllamaURL, "ollama-url", llm.DefaultURL(os.Getenv("OLLAMA_HOST")), "local LLM server (OLLAMA_HOST); with --llm-api openai, its root URL")
	fs.StringVar(&c.OllamaModel, "ollama-model", "exaone3.5:7.8b", "model for query plans and summaries")
	fs.BoolVar(&c.UseLLM, "llm", true, "use Ollama to plan and summarize (false: rule-based plans, results only)")
	fs.BoolVar(&c.LLMRemote, "llm-remote", false, "allow an LLM server that is not on this machine's loopback (questions and message text then leave the machine)")
	fs.StringVar(&c.LLMOwners, "llm-owner", strings.Join(llm.DefaultOwners, ","), "accounts (names or uids, comma-separated) besides searchd's own whose loopback listener may be the LLM server")
	c.Answer = answer.DefaultConfig()
	fs.Float64Var(&c.Answer.RRFK, "rrf-k", c.Answer.RRFK, "questions: reciprocal rank fusion constant k over a plan's subqueries")
	fs.Float64Var(&c.Answer.PlanCoverage, "plan-coverage", c.Answer.PlanCoverage, "questions: the share of the question's words an LLM plan must keep to be taken (1: all)")
	fs.BoolVar(&c.Answer.KeepQuestion, "keep-question", c.Answer.KeepQuestion, "questions: search the question itself beside the LLM's subqueries")
	fs.Float64Var(&c.Answer.QuestionWeight, "question-weight", c.Answer.QuestionWeight,
		"questions: how heavily the question's own ranking counts against all of an LLM plan's subqueries together in fusion (1: as much as all of them; 0: one vote, plain RRF)")
	fs.DurationVar(&c.Answer.PlanTimeout, "plan-timeout", c.Answer.PlanTimeout, "how long a query plan may take before rules plan instead")
	fs.DurationVar(&c.Answer.SummaryTimeout, "summary-timeout", c.Answer.SummaryTimeout, "how long a summary may take before results come alone")
	fs.StringVar(&c.Aliases, "aliases", "", `alias file: JSON like {"철수": ["910000000000000001"]} mapping names to user IDs`)
	fs.String("config", defaultConfigFile(), "config file: one 'flag value' per line")
}

// AnswerService builds the question-answering pipeline over svc.
func (c *Config) AnswerService(db *sqlite.DB, svc *search.Service) (*answer.Service, error) {
	a := &answer.Service{DB: db, Search: svc, Config: c.Answer}
	if c.UseLLM {
		o, err := llm.New(c.LLMAPI, llm.DefaultURL(c.OllamaURL), c.OllamaModel, c.LLMPolicy())
		if err != nil {
			return nil, fmt.Errorf("llm: %w", err)
		}
		a.LLM = o
	}
	if c.Aliases != "" {
		b, err := os.ReadFile(c.Aliases)
		if err != nil {
			return nil, fmt.Errorf("aliases: %w", err)
		}
		var raw map[string][]string
		if err := json.Unmarshal(b, &raw); err != nil {
			return nil, fmt.Errorf("aliases %s: %w", c.Aliases, err)
		}
		a.Aliases = map[string][]int64{}
		for name, ids := range raw {
			for _, s := range ids {
				id, err := strconv.ParseInt(s, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("aliases %s: %q: invalid user id %q", c.Aliases, name, s)
				}
				a.Aliases[strings.ToLower(name)] = append(a.Aliases[strings.ToLower(name)], id)
			}
		}
	}
	return a, nil
}

// LLMPolicy is where the configuration lets message text go.
func (c *Config) LLMPolicy() *llm.Policy {
	p := &llm.Policy{Remote: c.LLMRemote}
	for _, o := range strings.Split(c.LLMOwners, ",") {
		if o = strings.TrimSpace(o); o != "" {
			p.Owners = append(p.Owners, o)
		}
	}
	return p
}

// LoadModelFor loads the configured model and checks that db holds no
// vectors of another one.
func (c *Config) LoadModelFor(ctx context.Context, db *sqlite.DB) (*embed.Model, error) {
	model, err := c.LoadModel()
	if err != nil {
		return nil, err
	}
	if err := db.CheckModel(ctx, model.Name(), model.Dim(), model.Weights()); err != nil {
		model.Close()
		return nil, err
	}
	return model, nil
}

// OpenDB validates the configuration and opens an existing database.
// Only import and serve make a new one: a typo in --data must not turn
// into an empty database that answers every question with nothing.
func (c *Config) OpenDB(ctx context.Context) (*sqlite.DB, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(c.Data, sqlite.FileName)); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no database in %s: check --data (DSEARCH_DATA), or import exports first (searchd import PATH)", c.Data)
	}
	return sqlite.Open(ctx, c.Data)
}

// SearchConfig returns the search configuration with synonyms loaded.
func (c *Config) SearchConfig() (search.Config, error) {
	sc := c.Search
	if c.Synonyms == "" {
		return sc, nil
	}
	b, err := os.ReadFile(c.Synonyms)
	if err != nil {
		return sc, fmt.Errorf("synonyms: %w", err)
	}
	var raw map[string][]string
	if err := json.Unmarshal(b, &raw); err != nil {
		return sc, fmt.Errorf("synonyms %s: %w", c.Synonyms, err)
	}
	sc.Synonyms = map[string][]string{}
	for k, v := range raw {
		sc.Synonyms[strings.ToLower(strings.TrimSpace(k))] = v
	}
	return sc, nil
}

// LoadModel loads the configured embedding model.
func (c *Config) LoadModel() (*embed.Model, error) {
	if c.Model == "" {
		return nil, fmt.Errorf("no embedding model: set --model DIR (DSEARCH_MODEL); `make model` fetches a small one, docs/models.md installs bge-m3")
	}
	return embed.Load(c.Model, embed.Options{Backend: embed.Backend(c.EmbedBackend), ORTLibrary: c.ORTLibrary, Threads: c.EmbedThreads})
}

// loadMessageModel loads model's message weights (its directory's
// message_model) for the embedding job, or returns nil when it has none:
// the job then embeds messages with model. searchd serve never loads
// them, to keep its memory for searches.
func loadMessageModel(model *embed.Model) (*embed.Model, error) {
	if model.Config().MessageModel == "" {
		return nil, nil
	}
	return model.MessageModel()
}

// command builds a subcommand whose flags come from the command line, then
// DSEARCH_* variables, then the config file.
func command(name, usage, help string, cfg *Config, extra func(*flag.FlagSet), exec func(context.Context, []string) error) *ffcli.Command {
	fs := flag.NewFlagSet("searchd "+name, flag.ContinueOnError)
	cfg.register(fs)
	if usage == "[flags]" || strings.HasPrefix(usage, "--") { // flags only: a stray word is a mistake, not something to ignore
		run := exec
		exec = func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return &usageError{cmd: "searchd " + name, err: fmt.Errorf("%s takes no arguments, only flags: %q", name, args), hint: true}
			}
			return run(ctx, args)
		}
	}
	if extra != nil {
		extra(fs)
	}
	return &ffcli.Command{
		Name: name, ShortUsage: "searchd " + name + " " + usage, ShortHelp: help, FlagSet: fs,
		Options: []ff.Option{
			ff.WithEnvVarPrefix("DSEARCH"),
			ff.WithConfigFileFlag("config"),
			ff.WithConfigFileParser(configParser(fs)),
			ff.WithAllowMissingConfigFile(true), // the default's; a named one must exist (checkConfigFile)
		},
		Exec: exec,
	}
}

// configParser reads the config file as ff.PlainParser does, a line at a
// time, so that an error names the file and the line.
func configParser(fs *flag.FlagSet) ff.ConfigFileParser {
	return func(r io.Reader, set func(name, value string) error) error {
		s := bufio.NewScanner(r)
		for n := 1; s.Scan(); n++ {
			if err := ff.PlainParser(strings.NewReader(s.Text()), set); err != nil {
				return fmt.Errorf("%s:%d: %w", fs.Lookup("config").Value.String(), n, err)
			}
		}
		return s.Err()
	}
}

// checkConfigFile refuses a config file that was named (by --config or
// DSEARCH_CONFIG) but does not exist: a typo must not leave every setting
// at its default without a word. The default file may be absent.
func checkConfigFile(fs *flag.FlagSet) error {
	named := false
	fs.Visit(func(f *flag.Flag) { named = named || f.Name == "config" })
	path := fs.Lookup("config")
	if path == nil || !named || path.Value.String() == "" {
		return nil
	}
	if _, err := os.Stat(path.Value.String()); err != nil {
		return fmt.Errorf("--config: %w", err)
	}
	return nil
}

// SocketPath is the configured socket, or the default one.
func (c *Config) SocketPath() string {
	if c.Socket != "" {
		return c.Socket
	}
	return client.DefaultSocket(c.Data)
}

// Logger builds the process's one logger. Message text is never logged at
// info level or above, not even inside an error (privlog).
func (c *Config) Logger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch strings.ToLower(c.LogFormat) {
	case "text":
		return slog.New(privlog.New(slog.NewTextHandler(w, opts))), nil
	case "json":
		return slog.New(privlog.New(slog.NewJSONHandler(w, opts))), nil
	}
	return nil, fmt.Errorf("--log-format must be text or json, not %q", c.LogFormat)
}

func (c *Config) validate() error {
	if c.Rules.Gap <= 0 || c.Rules.ReplyWindow < 0 {
		return fmt.Errorf("--gap must be positive and --reply-window not negative")
	}
	switch c.Linker {
	case "shipped", "":
		if segment.DefaultLinkerErr != nil {
			return fmt.Errorf("--linker: the shipped model: %w", segment.DefaultLinkerErr)
		}
		c.Rules.Linker = segment.DefaultLinker
	case "off":
		c.Rules.Linker = nil
	default:
		b, err := os.ReadFile(c.Linker)
		if err != nil {
			return fmt.Errorf("--linker: %w", err)
		}
		if c.Rules.Linker, err = segment.ParseLinker(b); err != nil {
			return fmt.Errorf("--linker %s: %w", c.Linker, err)
		}
	}
	if c.Data == "" {
		return fmt.Errorf("--data is required (no home directory to default to)")
	}
	return nil
}

func defaultConfigFile() string { return client.DefaultConfigFile() }
