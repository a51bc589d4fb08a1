// Package llm talks to a local LLM server through langchaingo: Ollama's
// own API, or the OpenAI-compatible chat API that llama.cpp's server,
// LM Studio, vLLM and Ollama itself serve. Message text goes to the
// configured URL and nowhere else: by default only to a server on this
// machine's loopback that this account (or one named) runs, never
// through a proxy (Policy). No URL's credentials or query ever appear in
// an error (Redact).
package llm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/ollama"
	"github.com/tmc/langchaingo/llms/openai"
)

// Request is one completion.
type Request struct {
	System      string
	Prompt      string
	Temperature float64
	// JSON asks the server to constrain the output to JSON.
	JSON bool
	// MaxTokens bounds the answer (0: the server's default, often none):
	// under a JSON grammar a small model may write whitespace or repeat
	// keys until its context is full, minutes on a CPU.
	MaxTokens int
}

// The APIs a Client speaks.
const (
	APIOllama = "ollama" // POST /api/chat
	APIOpenAI = "openai" // POST /v1/chat/completions
)

// Client is one model on one local server.
type Client struct {
	// URL is the server's address as configured; Shown is the same
	// without credentials or query, for messages.
	API, URL, Shown, Model string
	Endpoint               Endpoint
	plain, json            llms.Model
	jsonOpt                []llms.CallOption // how this API asks for JSON per call
	maxOpt                 []llms.CallOption // and how it bounds the answer
}

// DefaultURL is Ollama's address: OLLAMA_HOST (or a flag) when set, with
// http:// added when it has no scheme, as Ollama does; else its default.
func DefaultURL(env string) string {
	if env == "" {
		return "http://127.0.0.1:11434"
	}
	if !strings.Contains(env, "://") {
		env = "http://" + env
	}
	return env
}

// New returns a client for api (APIOllama or APIOpenAI). For the OpenAI
// API, url is the server's root (…/v1 is added unless present) and the
// key is DSEARCH_LLM_API_KEY, if the server wants one. p says where the
// server may be (nil: loopback only, run by this account or one in
// DefaultOwners); a URL it does not allow is refused here. No connection
// is made until the first call.
func New(api, url, model string, p *Policy) (*Client, error) {
	if p == nil {
		p = &Policy{Owners: DefaultOwners}
	}
	ep, err := p.Check(context.Background(), url)
	if err != nil {
		return nil, err
	}
	hc := p.HTTPClient()
	c := &Client{API: api, URL: url, Shown: Redact(url), Model: model, Endpoint: ep}
	switch api {
	case APIOllama, "":
		c.API = APIOllama
		mk := func(json bool) (llms.Model, error) {
			opts := []ollama.Option{ollama.WithServerURL(url), ollama.WithModel(model), ollama.WithHTTPClient(hc)}
			if json {
				opts = append(opts, ollama.WithFormat("json"))
			}
			return ollama.New(opts...)
		}
		if c.plain, err = mk(false); err != nil {
			return nil, err
		}
		if c.json, err = mk(true); err != nil {
			return nil, err
		}
	case APIOpenAI:
		base := strings.TrimSuffix(url, "/")
		if !strings.HasSuffix(base, "/v1") {
			base += "/v1"
		}
		// Local servers take any key; langchaingo insists on one, and
		// must not pick up OPENAI_API_KEY meant for somewhere else.
		key := cmp.Or(os.Getenv("DSEARCH_LLM_API_KEY"), "local")
		l, err := openai.New(openai.WithBaseURL(base), openai.WithModel(model), openai.WithToken(key), openai.WithHTTPClient(hc))
		if err != nil {
			return nil, err
		}
		c.plain, c.json = l, l
		c.jsonOpt = []llms.CallOption{llms.WithJSONMode()}
		// max_tokens: what llama.cpp's server, LM Studio and Ollama read.
		c.maxOpt = []llms.CallOption{openai.WithLegacyMaxTokensField()}
	default:
		return nil, fmt.Errorf("unknown LLM API %q (ollama or openai)", api)
	}
	return c, nil
}

// Name is the model's name, which keys cached summaries.
func (c *Client) Name() string { return c.Model }

// ErrEmpty is an empty answer: langchaingo returns "" without an error
// when a stream is cut off, so an empty answer is a failure.
var ErrEmpty = errors.New("the model returned an empty answer (or one the client cut off: a broken stream, a reply over its limit)")

// Complete runs one chat completion within ctx's deadline.
func (c *Client) Complete(ctx context.Context, r Request) (string, error) {
	l, opts := c.plain, []llms.CallOption{llms.WithTemperature(r.Temperature)}
	if r.JSON {
		l, opts = c.json, append(opts, c.jsonOpt...)
	}
	if r.MaxTokens > 0 {
		opts = append(append(opts, llms.WithMaxTokens(r.MaxTokens)), c.maxOpt...)
	}
	msgs := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, r.System),
		llms.TextParts(llms.ChatMessageTypeHuman, r.Prompt),
	}
	start := time.Now()
	resp, err := l.GenerateContent(ctx, msgs, opts...)
	if err != nil {
		return "", fmt.Errorf("%s %s at %s: %w", c.API, c.Model, c.Shown, redactError(err, c.URL))
	}
	if len(resp.Choices) == 0 || strings.TrimSpace(resp.Choices[0].Content) == "" {
		return "", fmt.Errorf("%s %s after %s: %w", c.API, c.Model, time.Since(start).Round(time.Millisecond), ErrEmpty)
	}
	return resp.Choices[0].Content, nil
}
