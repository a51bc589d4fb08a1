// Package search is the search engine: keyword filter plus cosine with
// message-level rescoring (the blog's pipeline), BM25 over messages,
// exact cosine over segments, and their fusion by reciprocal rank.
package search

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"dsearch/searchd/index"
	"dsearch/searchd/lexical"
	"dsearch/searchd/sqlite"
)

// Embedder embeds queries and passages; embed.Model implements it.
type Embedder interface {
	Dim() int
	EmbedQuery(ctx context.Context, q string) ([]float32, error)
	EmbedPassages(ctx context.Context, texts []string) ([][]float32, error)
}

// Reader is an Embedder that can say how much of a text its vocabulary
// reads: the share of its letters in the model's pieces of words, from 0
// to 1 (embed.Model.Reading). An Embedder without it reads everything.
type Reader interface {
	Reading(text string) (float64, error)
}

// Mode is a retrieval method.
type Mode string

const (
	Pipeline Mode = "pipeline" // the blog's: keyword filter + cosine, message rescoring
	Semantic Mode = "semantic" // exact cosine over segments
	Lexical  Mode = "lexical"  // BM25 over messages
	Hybrid   Mode = "hybrid"   // weighted RRF of lexical and semantic
)

// ParseMode checks a mode name; "" is Pipeline.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case "":
		return Pipeline, nil
	case Pipeline, Semantic, Lexical, Hybrid:
		return m, nil
	}
	return "", fmt.Errorf("mode %q is not pipeline, semantic, lexical or hybrid", s)
}

// Config holds the engine's constants. The defaults are the blog's and
// Slackquery's.
type Config struct {
	Window         int     // candidates per retriever for fusion: 100
	LexicalWeight  float64 // hybrid: weight of the lexical z-scores, 0.5 (docs/retrieval.md, "Fusion")
	SemanticWeight float64 // hybrid: weight of the semantic z-scores, 1
	Pool           int     // segments rescored: 40
	RescoreLimit   int     // messages rescored per segment: 80
	FullChars      int     // a message this long gets full weight: 12
	SegmentWeight  float64 // final = w·segment + (1-w)·best message: 0.5
	// LexicalSupport: hybrid fuses the lexical side only when one of its
	// first hits holds this share of the query's content words (0.25;
	// 0 always fuses it). See fusion.go.
	LexicalSupport float64
	// AnswerCredit: a reply to a question scores at least this share of
	// the question's similarity, or of what the question asked about
	// (rescore.go, answerTo, askedAbout). 0.97; 0 disables.
	AnswerCredit float64
	// MinReading: a query the model reads less of (Reader) is one its
	// ranking knows nothing of: hybrid ranks by the query's words, and
	// the answer pipeline searches it in hybrid mode. 0.5: less than half
	// its letters. 0 disables.
	MinReading float64
	// MinSimilarity: semantic results below it are dropped; when none
	// pass, the response says nothing confident was found. 0 disables.
	MinSimilarity float64
	// Standout and Support decide a result's confidence (confidence.go):
	// it stands out by Standout standard deviations above what the best
	// of the conversations searched reaches by chance, or Support of the
	// query's content words are in its messages beyond those as much
	// text holds by chance (in lexical mode: Support alone). 1 and 0.4,
	// chosen by `searchd eval abstain` (docs/retrieval.md, "Abstention").
	Standout, Support float64
	// Closeness: a result is also confident when its similarity is this
	// share of the way from the query's mean similarity over the
	// conversations searched to the query's similarity to itself
	// embedded as a passage (a copy's): a translation or a paraphrase,
	// which shares no words and over many conversations need not stand
	// out. 0.4, chosen by `searchd eval abstain`; 0 disables it (and
	// the query's second embedding).
	Closeness float64
	// TranslationCloseness replaces Closeness for a result mostly written
	// in another script than the query (script.go): a translation cannot
	// be a copy, and multilingual-e5-small puts a sentence's translation
	// 0.25–0.76 of the way to a copy. 0.304, chosen by `searchd eval
	// abstain` for both networks of the default model (int8 and 4-bit:
	// docs/retrieval.md); 0: Closeness for every result.
	TranslationCloseness float64
	// Together: a response is also confident when its first page's
	// worth of results (togetherRanks) hold this share of the query's
	// content words between them beyond what as much text holds by
	// chance (Support's measure, over them as one text). 0.6, chosen
	// by `searchd eval abstain`; 0 disables it.
	Together float64
	// SupportNear: a result's Support counts only where its messages
	// nearer the query than the average message rescored hold some of
	// the words beyond chance (confidence.go): a word said in passing,
	// in a message about something else, is no match. Where the
	// similarity says nothing (lexical mode, a query the model cannot
	// read) Support counts as it is.
	SupportNear bool
	// RescoreBudget bounds embedding messages that have no stored vector
	// yet, per query.
	RescoreBudget time.Duration
	// Synonyms expand keywords (lower-cased key → alternatives).
	Synonyms map[string][]string
	// AuthorBoost: a person the query names (by any name they used) is
	// taken out of the query text, whose words they never are, and their
	// messages get this much more weight in the ranking (0 keeps names
	// as plain words).
	AuthorBoost float64
}

// DefaultConfig is the blog's configuration.
func DefaultConfig() Config {
	return Config{Window: 100, LexicalWeight: 0.5, LexicalSupport: 0.25, SemanticWeight: 1, MinReading: 0.5, Pool: 40, RescoreLimit: 80,
		FullChars: 12, SegmentWeight: 0.5, AnswerCredit: 0.97, RescoreBudget: 300 * time.Millisecond, AuthorBoost: 1,
		Standout: 1, Support: 0.4, Closeness: 0.4, TranslationCloseness: 0.304, Together: 0.6, SupportNear: true}
}

// Service answers searches. Embedder and Matrix may be nil (no model):
// then only lexical search works.
type Service struct {
	DB       *sqlite.DB
	Matrix   *index.Matrix
	Embedder Embedder
	// Keywords, when set and loaded, ranks keyword searches in memory;
	// otherwise FTS5 does, for an audience that reads every channel.
	Keywords *index.Keywords
	// KeywordWait is how long a search for a narrower audience waits for
	// Keywords to load before ErrKeywordsLoading (0: DefaultKeywordWait).
	KeywordWait time.Duration
	// Memberships, when set and loaded with Keywords, give a required
	// keyword's segments from memory; otherwise SQLite does.
	Memberships *index.Memberships
	Config      Config
	// Busy, when set and true, means searches are waiting to run: a
	// search then embeds no message on the fly (RescoreBudget). Those
	// rank without a vector for the seconds until the embedding job has
	// them, rather than every search spending the budget while others
	// queue behind it.
	Busy func() bool
	// Measure: every result's Confidence.Evidence also holds the
	// measures the rule does not use (the rarity-weighted support, a
	// look-up per word in the keyword index), for `searchd eval abstain`.
	Measure bool

	filters        filterCache     // by index version
	channelFilters filterCache     // filters by channels alone, by segments epoch
	channels       channelSegments // each channel's segments, by its version
}

// Limits of a request.
const (
	MaxLimit     = 50
	DefaultLimit = 10
	MaxFilterIDs = 100
	MaxKeywords  = 16
)

// Request is one search.
type Request struct {
	Query    string
	Keywords []string
	Filter   sqlite.Filter
	// Readable are the channels the audience may read, when Filter
	// narrows the search to fewer (a channel picked): how common a word
	// is, for a result's support, is told from them, never from a channel
	// they cannot read (none: from Filter's channels, or every channel).
	Readable []int64
	Mode     Mode
	Limit    int
	Cursor   string
	// Named are people the caller found named in the question (and took
	// out of Query): their messages are boosted as names in Query are.
	Named []int64
	// RankedMessages asks for the full ranked message list (evaluation).
	RankedMessages bool
	// Candidates asks hybrid for the message lists it fused, with each
	// retriever's scores (evaluation: fusions are compared on them).
	Candidates bool
}

// Validate checks the request's bounds and fills defaults.
func (r *Request) Validate() error {
	var err error
	if r.Mode, err = ParseMode(string(r.Mode)); err != nil {
		return err
	}
	r.Query = strings.TrimSpace(r.Query)
	if len(r.Query) > lexical.MaxQueryBytes {
		return fmt.Errorf("query is over %d bytes", lexical.MaxQueryBytes)
	}
	if r.Query == "" && len(r.Keywords) == 0 {
		return errors.New("q (or keywords) is required")
	}
	if r.Mode != Lexical && r.Query == "" {
		return fmt.Errorf("mode %s needs q", r.Mode)
	}
	if len(r.Keywords) > MaxKeywords {
		return fmt.Errorf("at most %d keywords", MaxKeywords)
	}
	if len(r.Filter.Authors) > MaxFilterIDs || len(r.Filter.Channels) > MaxFilterIDs {
		return fmt.Errorf("at most %d values per filter", MaxFilterIDs)
	}
	if r.Filter.Since != 0 && r.Filter.Until != 0 && r.Filter.Since > r.Filter.Until {
		return errors.New("since is after until")
	}
	switch {
	case r.Limit == 0:
		r.Limit = DefaultLimit
	case r.Limit < 0 || r.Limit > MaxLimit:
		return fmt.Errorf("limit must be from 1 to %d", MaxLimit)
	}
	return nil
}

// Result is one ranked segment (or, in lexical mode, message).
type Result struct {
	SegmentID    int64
	MessageID    int64 // the best message
	ChannelID    int64
	GuildID      int64
	StartAt      int64
	MessageCount int
	Authors      []string
	AuthorIDs    []int64 // Authors' IDs, in their order
	Score        float64
	Components   map[string]Component
	Previews     []sqlite.StoredMessage
	// Ranked are the result's message IDs, best first (segments expand
	// into their messages).
	Ranked []int64
	// Confidence says how clearly it matches the query (on a page).
	Confidence Confidence
}

// Component is one retriever's part in a result's score.
type Component struct {
	Rank  int     `json:"rank"` // 1-based; 0 when the retriever did not find it
	Score float64 `json:"score"`
}

// Response is a page of results.
type Response struct {
	Mode       Mode
	Results    []Result
	Total      int // ranked results in all pages
	NextCursor string
	// KeywordFallback: no segment contained the keywords, so the
	// pipeline searched without them.
	KeywordFallback bool
	// NoConfidentResults: none of the first results is confident
	// (Result.Confidence), or nothing passed the similarity floor.
	NoConfidentResults bool
	// Reading is the share of the query the model reads (Reader), in
	// the modes that embed it; Unread says it is under MinReading.
	Reading float64
	Unread  bool
	// LexicalLeftOut: in hybrid mode, none of the lexical side's first
	// hits held enough of the query's content words (Config.LexicalSupport)
	// for it to count; the results rank by meaning alone.
	LexicalLeftOut bool
	// RankedMessages is the whole ranked message list, when asked.
	RankedMessages []int64
	// Candidates are hybrid's lexical and semantic message lists, best
	// first, and Kind how it read the query, when asked.
	Candidates     map[string][]Scored
	Kind           QueryKind
	QueryEmbedTime time.Duration
	// EmbeddedMessages counts the message texts embedded on the fly
	// (no stored vector yet) to rescore this query.
	EmbeddedMessages int
}

// Scored is a message with a retriever's score.
type Scored struct {
	ID    int64   `json:"id"`
	Score float64 `json:"score"`
}
